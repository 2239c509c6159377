"""One colour per technique, fixed, so that a technique has the same colour in every chart of every report: the
nine techniques of harness/stack/techniques/ take Paul Tol's nine muted colours (colour-blind safe); the settings that
belong to no technique (the model, the workload) and changes of several techniques at once take colours of his
light scheme that look like none of those. Levels of one technique (kernels liger, kernels unsloth) share its
colour and are told apart by their marker (points), hatch (bars) or line style (curves)."""

from __future__ import annotations

from collections.abc import Iterable

from harness.stack.techniques import TECHNIQUES

# Paul Tol's muted scheme (personal.sron.nl/~pault), in the order harness/stack/techniques/ applies the techniques
TOL_MUTED = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499")
TECHNIQUE_COLOURS: dict[str, str] = {t.axis: colour for t, colour in zip(TECHNIQUES, TOL_MUTED, strict=True)}
# from Tol's light scheme: neither technique colours nor the baseline's black
MODEL_COLOUR = "#EE8866"
WORKLOAD_COLOUR = "#77AADD"
SEVERAL_COLOUR = "#666666"
BASELINE_COLOUR = "#000000"
TOL_GREY = "#BBBBBB"
# a level's marker, hatch and line style within its technique's colour, in the chart's order of the levels
MARKERS = ("o", "s", "^", "D", "v", "P", "<", ">")
HATCHES = (None, "...", "\\\\\\", "ooo", "---", "+++", "|||", "**")  # "///" marks an out-of-memory bar
LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2)))
# settings that belong to the model, not to a technique
MODEL_SETTINGS = ("model",)
_OWNER = {setting.name: t.axis for t in TECHNIQUES for setting in t.settings}


def technique(change: str) -> str:
    """The technique a change against the baseline is a level of ('kernels liger' -> 'kernels'), 'model' or
    'workload' for other settings, 'several' where it changes more than one, '' for no change."""
    if not change:
        return ""
    owners = {_owner(part.strip().split(" ", 1)[0]) for part in change.split(", ")}
    return owners.pop() if len(owners) == 1 else "several"


def _owner(setting: str) -> str:
    if setting in _OWNER:
        return _OWNER[setting]
    return "model" if setting in MODEL_SETTINGS else "workload"


def technique_colour(name: str) -> str:
    if name == "":
        return BASELINE_COLOUR
    return TECHNIQUE_COLOURS.get(name) or {"model": MODEL_COLOUR, "workload": WORKLOAD_COLOUR,
                                           "several": SEVERAL_COLOUR}.get(name, TOL_GREY)


class Palette:
    """A colour per technique (fixed, the same in every report), and a marker, hatch and line style per level
    of it, in the order the matrix first shows the level; the baseline black and round."""

    def __init__(self, changes: Iterable[str]) -> None:
        levels: dict[str, list[str]] = {}
        for change in dict.fromkeys(changes):
            levels.setdefault(technique(change), []).append(change)
        self._rank = {change: i for members in levels.values() for i, change in enumerate(members)}

    def __call__(self, change: str) -> str:
        return technique_colour(technique(change))

    def level(self, change: str) -> int:
        """The change's rank among the levels of its technique in this matrix (0 for the first)."""
        return self._rank.get(change, 0)

    def marker(self, change: str) -> str:
        return MARKERS[self.level(change) % len(MARKERS)]

    def hatch(self, change: str) -> str | None:
        return HATCHES[self.level(change) % len(HATCHES)]

    def line_style(self, change: str) -> str | tuple:
        return LINE_STYLES[self.level(change) % len(LINE_STYLES)]
