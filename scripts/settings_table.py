"""Print the README's settings table from the settings tree (one source of truth).

.venv/bin/python scripts/settings_table.py            # print it
.venv/bin/python scripts/settings_table.py --write    # replace it in README.md
"""

from __future__ import annotations

import sys
from pathlib import Path

from codesift.indexer.settings import describe_settings

BEGIN = "<!-- settings-table:begin -->"
END = "<!-- settings-table:end -->"


def render() -> str:
    lines = ["| setting | type | default | what it does |", "|---|---|---|---|"]
    for s in describe_settings():
        default = s.default
        if isinstance(default, tuple):
            default = ", ".join(f"`{d}`" for d in default) or "(none)"
        elif default is None:
            default = "(unset)"
        elif isinstance(default, str):
            default = f"`{default}`" if default else '`""`'
        else:
            default = f"`{default}`"
        lines.append(f"| `{s.key}` | {s.type} | {default} | {s.doc} |")
    return "\n".join(lines)


def main() -> int:
    table = render()
    if "--write" not in sys.argv:
        print(table)
        return 0
    readme = Path(__file__).resolve().parent.parent / "README.md"
    text = readme.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    readme.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
