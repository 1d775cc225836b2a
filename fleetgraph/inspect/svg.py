"""SVG drawings of programs without Graphviz: the DOT view's nodes and styles (`graph.py`), placed in
layers by the fast-sugiyama package (Sugiyama's layered layout, as Graphviz's dot does).

Steps of `program_to_svg`, for each block in turn (drawn one under the other):
  1. take the block's networkx view (`to_networkx`): op boxes and variable ellipses, styled as in DOT;
  2. lay out its edges with fast-sugiyama (cycles from in-place ops such as sgd are broken by the
     layout; long edges pass through dummy points, which become the bends of their curve); nodes no
     edge touches go in a last row;
  3. size each row to its tallest node, and write the shapes, edges and slot labels as SVG.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..ir.errors import FleetgraphError
from ..ir.program import Block, Program
from .graph import _op_style, _var_style, to_networkx

CHAR_W, LINE_H, PAD, GAP_X, GAP_Y, MARGIN, DUMMY_W = 6.6, 14.0, 10.0, 24.0, 34.0, 16.0, 8.0
MISSING = "--svg without Graphviz needs the fast-sugiyama package (pip install 'fleetgraph[svg]'); or install Graphviz"


@dataclass
class _Shape:
    node: str  # the element id: the DOT view's node id, as program_to_dot prefixes it ('b0/op:3')
    style: dict
    w: float
    h: float
    x: float = 0.0  # centre
    y: float = 0.0


def program_to_svg(program: Program, block: int | None = None) -> str:
    """An SVG drawing of the whole program (one panel per block) or of block `block`."""
    blocks = program.blocks if block is None else [program.block(block)]
    panels, width, top = [], 0.0, MARGIN
    for b in blocks:
        body, w, h = _panel(b, top, titled=block is None)
        panels.append(body)
        width, top = max(width, w), top + h + GAP_Y
    width += 2 * MARGIN
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{top:.0f}" '
        f'viewBox="0 0 {width:.0f} {top:.0f}" font-family="Helvetica, Arial, sans-serif">\n'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>\n' + "".join(panels) + "</svg>\n"
    )


def _panel(block: Block, top: float, titled: bool) -> tuple[str, float, float]:
    graph = to_networkx(block)  # step 1
    shapes = {}
    for node, data in graph.nodes(data=True):
        style = _op_style(data) if data["kind"] == "op" else _var_style(data, block.idx)
        lines = style["label"].split("\n")
        w = max(len(line) for line in lines) * CHAR_W + 2 * PAD + (12 if data["kind"] == "var" else 0)
        shapes[node] = _Shape(f"b{block.idx}/{node}", style, w, len(lines) * LINE_H + PAD)
    edges = [(s, d, data["slot"]) for s, d, data in graph.edges(data=True)]
    title_h = 22.0 if titled else 0.0
    routes = _layout(shapes, [(s, d) for s, d, _ in edges], top + title_h)  # step 2
    width = max((s.x + s.w / 2 for s in shapes.values()), default=0.0) - MARGIN
    bottom = max((s.y + s.h / 2 for s in shapes.values()), default=top + title_h)
    out = [f'<g class="block" id="block{block.idx}">\n']  # step 3
    if titled:
        title = f"block {block.idx}" + (f" (parent {block.parent_idx})" if block.parent_idx >= 0 else "")
        out.append(f'<text x="{MARGIN}" y="{top + 14:.1f}" font-size="13" font-weight="bold">{_e(title)}</text>\n')
    for src, dst, slot in edges:
        out.append(_edge(shapes[src], shapes[dst], routes.get((src, dst), []), slot))
    out += [_node(s) for s in shapes.values()]
    out.append("</g>\n")
    return "".join(out), width, bottom - top


def _layout(shapes: dict[str, _Shape], edges: list[tuple[str, str]], top: float) -> dict:
    """Place every shape (centres); returns the bend points of each laid-out edge."""
    try:
        from fast_sugiyama import from_edges
    except ImportError:
        raise FleetgraphError(MISSING) from None
    # the library spaces every node alike: lay out in slots of a typical width, then widen each row
    slot = sorted(s.w for s in shapes.values())[len(shapes) // 2] + GAP_X if shapes else GAP_X
    pairs = list(dict.fromkeys((s, d) for s, d in edges if s != d))
    layouts = from_edges(pairs, vertex_spacing=slot).dot_layout(spacing=slot) if pairs else []
    points, succ = {}, {}
    for positions, *_rest in layouts:
        points.update(dict(positions))
    for *_rest, laid in layouts:
        for a, b in laid or []:
            succ.setdefault(a, []).append(b)
    levels = sorted({y for _, y in points.values()}, reverse=True)  # the library puts sinks at 0
    rows = [sorted((n for n, (_, y) in points.items() if y == level), key=lambda n: points[n][0]) for level in levels]
    loose = [n for n in shapes if n not in points]
    if loose:
        rows.append(loose)
    left = min((x for x, _ in points.values()), default=0.0)
    y, bends = top, {}
    for r in rows:
        height = max((shapes[n].h for n in r if n in shapes), default=LINE_H)
        cursor = MARGIN
        for n in r:
            w = shapes[n].w if n in shapes else DUMMY_W
            wanted = points[n][0] - left + MARGIN + slot / 2 if n in points else 0.0
            x = max(wanted, cursor + w / 2)
            cursor = x + w / 2 + GAP_X
            if n in shapes:
                shapes[n].x, shapes[n].y = x, y + height / 2
            else:
                bends[n] = (x, y + height / 2)
        y += height + GAP_Y
    return _routes(shapes, succ, bends)


def _routes(shapes: dict[str, _Shape], succ: dict, bends: dict) -> dict:
    """(source, target) -> the dummy points its laid-out edge passes through, in source-to-target order."""
    routes = {}
    for a, targets in succ.items():
        if a not in shapes:
            continue
        for b in targets:
            path = []
            while b not in shapes and b in bends:
                path.append(bends[b])
                b = (succ.get(b) or [None])[0]
            if b is None:
                continue
            routes[(a, b)] = path
            routes.setdefault((b, a), path[::-1])  # an edge the layout reversed to break a cycle
    return routes


def _edge(src: _Shape, dst: _Shape, bends: list, slot: str) -> str:
    down = dst.y >= src.y
    start = (src.x, src.y + (src.h / 2 if down else -src.h / 2))
    end = (dst.x, dst.y - (dst.h / 2 if down else -dst.h / 2))
    pts = [start, *bends, end]
    d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        mid = (y0 + y1) / 2
        d += f" C{x0:.1f},{mid:.1f} {x1:.1f},{mid:.1f} {x1:.1f},{y1:.1f}"
    lx, ly = pts[len(pts) // 2 - (0 if len(pts) % 2 else 1)]
    lx2, ly2 = pts[len(pts) // 2]
    return (
        f'<path d="{d}" fill="none" stroke="#444" stroke-width="1" marker-end="url(#arrow)"/>'
        f'<text x="{(lx + lx2) / 2 + 3:.1f}" y="{(ly + ly2) / 2:.1f}" font-size="9" fill="#555">{_e(slot)}</text>\n'
    )


def _node(s: _Shape) -> str:
    style = s.style
    looks = style.get("style", "").split(",")
    fill = style.get("fillcolor", "#ffffff") if "filled" in looks else "#ffffff"
    stroke = style.get("color", "#333333")
    dash = ' stroke-dasharray="4 3"' if "dashed" in looks else ""
    paint = f'fill="{fill}" stroke="{stroke}"{dash}'
    if style.get("shape") == "box":
        shape = f'<rect x="{s.x - s.w / 2:.1f}" y="{s.y - s.h / 2:.1f}" width="{s.w:.1f}" height="{s.h:.1f}" {paint}/>'
    else:
        rx, ry = s.w / 2, s.h / 2
        shape = f'<ellipse cx="{s.x:.1f}" cy="{s.y:.1f}" rx="{rx:.1f}" ry="{ry:.1f}" {paint}/>'
        if style.get("peripheries") == "2":
            outer = f'rx="{rx + 3:.1f}" ry="{ry + 3:.1f}" fill="none" stroke="{stroke}"'
            shape += f'<ellipse cx="{s.x:.1f}" cy="{s.y:.1f}" {outer}/>'
    lines = style["label"].split("\n")
    first = s.y - (len(lines) - 1) * LINE_H / 2 + 4
    text = "".join(
        f'<text x="{s.x:.1f}" y="{first + i * LINE_H:.1f}" font-size="11" text-anchor="middle">{_e(line)}</text>'
        for i, line in enumerate(lines)
    )
    return f'<g class="node" id="{_e(s.node)}"><title>{_e(s.node)}</title>{shape}{text}</g>\n'


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)
