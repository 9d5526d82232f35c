"""Print the JSON schema of tournament configs: ``python -m runner.commands.schema > configs/schema.json``."""

from __future__ import annotations

import json
import sys

from runner.config import json_schema


def main() -> int:
    print(json.dumps(json_schema(), indent=2, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
