"""Fresh identifiers: 128 random bits each, never the same twice, not even across a fork."""

from __future__ import annotations

import os
import re

from acpio._protocol.ids import new_id


def test_an_identifier_is_its_prefix_and_32_hex_digits() -> None:
    assert re.fullmatch(r"sess_[0-9a-f]{32}", new_id("sess"))


def test_identifiers_never_repeat_across_many_pools() -> None:
    made = [new_id("x") for _ in range(20_000)]  # about eighty 4 KiB pools
    assert len(set(made)) == len(made)


def test_a_forked_child_does_not_hand_out_its_parents_next_identifiers() -> None:
    new_id("warm")  # the parent holds a pool with unused bits
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next identifiers, then leave at once
        try:
            os.write(write, " ".join(new_id("x") for _ in range(8)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as child:
        theirs = set(child.read().decode().split())
    os.waitpid(pid, 0)
    ours = {new_id("x") for _ in range(8)}
    assert len(theirs) == 8
    assert not ours & theirs
