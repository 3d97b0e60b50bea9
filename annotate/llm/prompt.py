"""Versioned prompt templates: the version is a hash of the template file."""

import hashlib
from dataclasses import dataclass
from pathlib import Path

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"
USER_SEPARATOR = "---- user ----"


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    system: str
    user: str

    def messages(self, title: str, story: str) -> list[dict]:
        # str.replace, not str.format: stories may contain braces.
        user = self.user.replace("{title}", title).replace("{story}", story)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


def load_prompt(name: str = "moral_v1", directory: Path = PROMPT_DIR) -> Prompt:
    raw = (directory / f"{name}.txt").read_bytes()
    text = raw.decode("utf-8")
    system, sep, user = text.partition(USER_SEPARATOR)
    if not sep:
        raise ValueError(f"{name}.txt has no '{USER_SEPARATOR}' line")
    version = f"{name}@{hashlib.sha256(raw).hexdigest()[:12]}"
    return Prompt(name=name, version=version, system=system.strip(), user=user.strip())
