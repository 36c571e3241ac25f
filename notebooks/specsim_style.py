"""The report's style of each rule for matplotlib.

styles.json is written from the Go package plots (plots.NamedStyles; the
notebooks package's TestStylesJSON keeps it in sync), so a notebook draws
every rule in the colour and marker the report's figures use.
"""
import json
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "styles.json")) as f:
    STYLES = json.load(f)


def style(name, line=True):
    """matplotlib keyword arguments (color, marker, fill, dashes) for rule name.

    Names without a fixed style get matplotlib's defaults (an empty dict
    plus the label), as plots.StyleOf gives them a hashed colour.
    """
    s = STYLES.get(name)
    if s is None:
        return {"label": name}
    kw = {"color": s["color"], "marker": s["marker"], "label": name}
    if not s["filled"] and s["marker"] not in ("x", "+"):
        kw["markerfacecolor"] = "none"
    if line and s.get("dashes"):
        kw["dashes"] = s["dashes"]
    if not line:
        kw["linestyle"] = "none"
    return kw
