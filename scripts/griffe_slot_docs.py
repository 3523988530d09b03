"""A griffe extension for the API reference (mkdocs.yml): fields documented in a
``__slots__`` dict get those texts as their docstrings.

Python keeps a ``__slots__`` dict's values as the fields' docs, so ``help()`` shows them
(``acpio.testing.SessionView`` documents its fields that way); griffe, which reads the
source, does not know the convention. Only fields without a docstring of their own get one.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe


class SlotDocs(griffe.Extension):
    """Give each field named in a ``__slots__`` dict literal the text it maps to."""

    def on_class_members(
        self, *, node: ast.AST | griffe.ObjectNode, cls: griffe.Class, **kwargs: Any
    ) -> None:
        if not isinstance(node, ast.ClassDef):
            return
        for statement in node.body:
            if not (
                isinstance(statement, ast.Assign)
                and isinstance(statement.value, ast.Dict)
                and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in statement.targets)
            ):
                continue
            for key, value in zip(statement.value.keys, statement.value.values, strict=True):
                if key is None:
                    continue
                name, text = ast.literal_eval(key), ast.literal_eval(value)
                member = cls.members.get(name)
                if isinstance(member, griffe.Attribute) and member.docstring is None:
                    member.docstring = griffe.Docstring(text, parent=member)
