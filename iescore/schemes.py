"""Under the pipeline, beside the options: the tag schemes as tables, read by stage 1 (decode; Concepts: tag schemes and repairs).

Each scheme says which prefix letters it uses, the *role* of each letter and which
roles may legally begin or end a chunk; the decoders (`iescore.decode.decoder`,
`iescore.decode.pair`) read only these tables, so one decoder serves every scheme.

Roles: ``O`` outside, ``B`` begin, ``I`` inside, ``E`` end, ``S`` single
(IOBES ``S``, BILOU ``U``), ``L`` last (BILOU).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ConfigError, choices

# role codes
O, B, I, E, S, L = 0, 1, 2, 3, 4, 5
ROLE_NAMES = ("O", "B", "I", "E", "S", "L")
REPAIRS = ("conlleval", "strict", "discard")


@dataclass(frozen=True)
class Scheme:
    """A tag scheme as a table.

    ``letters`` maps each prefix letter to its role; ``start_ok[role, cont]`` says
    whether a chunk may begin with that role when the previous token continues
    the same label (``cont`` = 1) or not (0); ``end_ok[role, cont]`` the same for
    ending a chunk given whether the next token has the same label.
    ``bare`` accepts unprefixed labels as inside tags (IO only).
    """

    name: str
    letters: dict[str, int]
    start_ok: np.ndarray
    end_ok: np.ndarray
    bare: bool = False

    def tag(self, role: int, label: str, delimiter: str = "-") -> str:
        """Spell a tag of this scheme for ``role`` and ``label``."""
        if role == O:
            return "O"
        for letter, r in self.letters.items():
            if r == role:
                return f"{letter}{delimiter}{label}"
        raise ConfigError(f"scheme {self.name} has no {ROLE_NAMES[role]} role")


def _table(entries: dict[int, tuple[bool, bool]]) -> np.ndarray:
    t = np.zeros((6, 2), dtype=bool)
    for role, (no_cont, cont) in entries.items():
        t[role] = (no_cont, cont)
    return t


_ALL = (True, True)
_NONE = (False, False)
SCHEMES: dict[str, Scheme] = {
    "IO": Scheme("IO", {"I": I}, _table({I: _ALL}), _table({I: _ALL}), bare=True),
    "IOB1": Scheme(
        "IOB1", {"B": B, "I": I}, _table({I: _ALL, B: (False, True)}), _table({I: _ALL, B: _ALL})
    ),
    "IOB2": Scheme("IOB2", {"B": B, "I": I}, _table({B: _ALL, I: _NONE}), _table({I: _ALL, B: _ALL})),
    "IOE1": Scheme(
        "IOE1", {"I": I, "E": E}, _table({I: _ALL, E: _ALL}), _table({I: (True, False), E: (False, True)})
    ),
    "IOE2": Scheme("IOE2", {"I": I, "E": E}, _table({I: _ALL, E: _ALL}), _table({E: _ALL, I: _NONE})),
    "IOBES": Scheme(
        "IOBES",
        {"B": B, "I": I, "E": E, "S": S},
        _table({B: _ALL, S: _ALL, I: _NONE, E: _NONE}),
        _table({E: _ALL, S: _ALL, B: _NONE, I: _NONE}),
    ),
    "BMES": Scheme(
        "BMES",
        {"B": B, "M": I, "E": E, "S": S},
        _table({B: _ALL, S: _ALL, I: _NONE, E: _NONE}),
        _table({E: _ALL, S: _ALL, B: _NONE, I: _NONE}),
    ),
    "BILOU": Scheme(
        "BILOU",
        {"B": B, "I": I, "L": L, "U": S},
        _table({B: _ALL, S: _ALL, I: _NONE, L: _NONE}),
        _table({L: _ALL, S: _ALL, B: _NONE, I: _NONE}),
    ),
}
# prefix letters of any scheme: alone, such a letter is a chunk tag with an empty label
PREFIX_LETTERS = frozenset(letter for sch in SCHEMES.values() for letter in sch.letters)
_ALIASES = {"BIO": "IOB2", "BIOES": "IOBES", "BILUO": "BILOU", "IOBES": "IOBES"}


def get_scheme(name: str | Scheme) -> Scheme:
    """Look a scheme up by name (case-insensitive; BIO, BIOES and BILUO are aliases)."""
    if isinstance(name, Scheme):
        return name
    key = str(name).upper()
    key = _ALIASES.get(key, key)
    if key not in SCHEMES:
        raise ConfigError(
            f"unknown tag scheme {name!r}; valid schemes: {choices(list(SCHEMES) + ['auto'])}"
        )
    return SCHEMES[key]
