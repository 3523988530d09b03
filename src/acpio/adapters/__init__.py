"""Adapters that serve agents written with other frameworks as ACP agents.

Each adapter lives in its own submodule and needs its framework's extra:
``acpio.adapters.pydantic_ai`` (``pip install "acpio[pydantic-ai]"``) serves a
``pydantic_ai.Agent``; ``acpio.adapters.langgraph`` (``pip install "acpio[langgraph]"``)
serves a compiled LangGraph graph. Importing this package imports no framework.
"""
