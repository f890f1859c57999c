"""Bounds for YAML we did not write: document size, nesting and alias expansion ("billion laughs").

PyYAML composes ``*alias`` references as the very node the ``&anchor`` names, so composing is cheap; the
cost comes from every walk that treats the node graph as a tree (our position-keeping builder, msgspec,
json). Nine levels of ten aliases each are a billion values from under a kilobyte of text. ``compose_bounded``
composes the document, counts how many values it stands for once every alias is expanded (memoized per
node, so counting is linear in the text), and refuses a document over ``MAX_VALUES`` pointing at the alias
that expands the most. PyYAML has no such limit of its own, so this is written by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

MAX_DOC_BYTES = 1024 * 1024  # a spec or a pack is a few KB; 1 MiB is far beyond any real one
MAX_VALUES = 100_000  # scalars + mappings + lists once every alias is expanded
MAX_DEPTH = 200  # nesting of mappings/lists


@dataclass
class YamlLimitError(Exception):
    """A document over a limit: where (1-based line, col) and what to do."""

    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"{self.line}:{self.col}: {self.message}"


class TrackingLoader(yaml.SafeLoader):
    """A SafeLoader that remembers where each ``*alias`` is used (PyYAML drops that mark)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.alias_uses: list[tuple[str, yaml.Mark, yaml.Node]] = []
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            ev = self.peek_event()  # type: ignore[no-untyped-call,unused-ignore]
            node = self.anchors.get(ev.anchor)
            if node is not None:
                self.alias_uses.append((str(ev.anchor), ev.start_mark, node))
        else:
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    ev = self.peek_event()  # type: ignore[no-untyped-call,unused-ignore]
                    m = ev.start_mark
                    raise YamlLimitError(
                        m.line + 1,
                        m.column + 1,
                        f"nested more than {MAX_DEPTH} levels deep; "
                        "a spec or pack is a few levels of mappings and lists: flatten it",
                    )
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1
        return super().compose_node(parent, index)


def check_size(text: str, what: str = "a spec") -> None:
    size = len(text.encode("utf-8", "replace"))
    if size > MAX_DOC_BYTES:
        raise YamlLimitError(
            1,
            1,
            f"the file is {size} bytes; {what} is limited to {MAX_DOC_BYTES} bytes "
            "(real ones are a few KB): is this the right file?",
        )


def expanded_size(root: yaml.Node | None, memo: dict[int, int] | None = None) -> int:
    """How many nodes ``root`` stands for with every alias expanded (memoized on node identity)."""
    if root is None:
        return 0
    memo = {} if memo is None else memo
    # iterative post-order: a deep document must not overflow Python's stack here
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in memo:
            continue
        if isinstance(node, yaml.MappingNode):
            kids = [x for kv in node.value for x in kv]
        elif isinstance(node, yaml.SequenceNode):
            kids = list(node.value)
        else:
            memo[id(node)] = 1
            continue
        if ready:
            memo[id(node)] = 1 + sum(memo[id(k)] for k in kids)
        else:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in memo)
    return memo[id(root)]


def compose_bounded(text: str, what: str = "a spec") -> tuple[yaml.Node | None, Any]:
    """(root node, the loader) for ``text``, or ``YamlLimitError``. YAML syntax errors propagate as PyYAML's.

    The caller disposes of the loader (it also constructs values from the nodes)."""
    check_size(text, what)
    loader = TrackingLoader(text)
    try:
        root = loader.get_single_node()
    except RecursionError:
        loader.dispose()
        raise YamlLimitError(1, 1, "nested too deeply to read; flatten the document") from None
    except BaseException:
        loader.dispose()
        raise
    try:
        check_expansion(root, loader, what)
    except YamlLimitError:
        loader.dispose()
        raise
    return root, loader


def check_expansion(root: yaml.Node | None, loader: Any, what: str = "a spec") -> None:
    """Refuse a composed document that stands for more than ``MAX_VALUES`` values once aliases are expanded;
    ``loader`` is the ``TrackingLoader`` that composed it (for where the aliases are)."""
    memo: dict[int, int] = {}
    total = expanded_size(root, memo)
    if total <= MAX_VALUES:
        return
    uses = getattr(loader, "alias_uses", [])
    if uses:
        anchor, mark, node = max(uses, key=lambda u: (expanded_size(u[2], memo), -u[1].line, -u[1].column))
        raise YamlLimitError(
            mark.line + 1,
            mark.column + 1,
            f"YAML aliases expand this document to more than {MAX_VALUES} values (this *{anchor} alone stands "
            f"for {expanded_size(node, memo)}); nested aliases like this are a 'billion laughs' bomb, not a "
            "spec: write the values out, or use an alias only for a small shared mapping",
        )
    raise YamlLimitError(
        1,
        1,
        f"the document holds more than {MAX_VALUES} values; {what} is far smaller: is this the right file?",
    )


def check_text(text: str, what: str = "a spec") -> None:
    """Raise ``YamlLimitError`` when ``text`` is over a limit (YAML syntax errors are left to the caller)."""
    try:
        _root, loader = compose_bounded(text, what)
    except yaml.YAMLError:
        return
    loader.dispose()


def safe_load_bounded(text: str, what: str = "a spec") -> Any:
    """``yaml.safe_load`` that refuses documents over the limits (``YamlLimitError``)."""
    root, loader = compose_bounded(text, what)
    try:
        return None if root is None else loader.construct_document(root)
    finally:
        loader.dispose()


Marks = dict[tuple[Any, ...], tuple[int, int]]


def node_marks(node: yaml.Node | None, path: tuple[Any, ...] = (), out: Marks | None = None) -> Marks:
    """1-based (line, col) of every value by its key path (``("tools", 0, "name")``), and of every mapping key
    under ``(*path, key, "__key__")``: how an error about a value points at the spot in the file."""
    out = {} if out is None else out
    if node is None:
        return out
    out[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else None
            out.setdefault((*path, key, "__key__"), (k.start_mark.line + 1, k.start_mark.column + 1))
            node_marks(v, (*path, key), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            node_marks(v, (*path, i), out)
    return out


def load_with_marks(text: str, what: str) -> tuple[Any, yaml.Node | None, Marks]:
    """The one bounded, positions-aware YAML reader of packs and case files (specs add interpolation and
    styles on top of ``compose_bounded`` in ``spec.loader``): (data, root node, marks). Raises
    ``YamlLimitError`` or PyYAML's ``YAMLError`` (with its mark)."""
    node, loader = compose_bounded(text, what)
    try:
        data = None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()
    return data, node, node_marks(node)
