"""A report as sections of labelled tables: what ``render.build_view`` hands both templates (Markdown and
HTML), and what the modules that build one section each (``reports.conditions``) return."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    caption: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class Section:
    id: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    charts: list[str] = field(default_factory=list)  # inline SVG (html only)
    bullets: list[str] = field(default_factory=list)
    bullets_title: str = ""
    after: list[str] = field(default_factory=list)  # paragraphs after the bullets
    code: list[tuple[str, str]] = field(default_factory=list)  # (label, text)
    empty: bool = False  # nothing of this kind in the run: left out of the report
    appendix: bool = False  # set-up, host and reference material: after the results, under "Appendix"
