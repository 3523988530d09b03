// What the remote interop clients (remote_client.mjs, balancer_client.mjs) share.

// `promise`, or an error naming `what` once `ms` milliseconds pass without its answer.
export function within(ms, what, promise) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// Node's WebSocket takes the handshake's headers (token, cookies) in its second argument.
export class NodeWebSocket extends globalThis.WebSocket {
  constructor(url, protocols, init) {
    super(url, { protocols, headers: init?.headers });
  }
}
