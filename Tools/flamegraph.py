#!/usr/bin/env python3
"""Writes a flame graph, as an SVG file, from the output of `perf script` (perf record -g).

    perf script -i perf.data | python3 Tools/flamegraph.py --title "question" [--root REGEX] > question.svg

Each sample's call stack is folded, root first; Swift names are demangled with `swift demangle --simplified`
when it is on the PATH. With --root, only the samples with a frame matching REGEX count, and each is cut so
that its outermost matching frame is the graph's root: a profile of one part of a run. A frame's width is its
share of the samples counted; its tooltip (the SVG's <title>) gives the samples and the share. The file is
self-contained: no script, no outside resource.
"""
import argparse
import collections
import hashlib
import html
import re
import shutil
import subprocess
import sys


def read_stacks(lines):
    """Yields each sample's frames, leaf first, as perf script prints them."""
    frames = []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                yield frames
            frames = []
            continue
        if line[0] in " \t":
            parts = line.strip().split(None, 1)
            if len(parts) == 2:
                name = parts[1].rsplit(" (", 1)[0]
                frames.append(re.sub(r"\+0x[0-9a-f]+$", "", name))
    if frames:
        yield frames


def demangler(names):
    """A map from each name to its demangled form (itself where swift is missing)."""
    names = sorted(names)
    if not names or not shutil.which("swift"):
        return {name: name for name in names}
    result = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names),
                            capture_output=True, text=True, check=False)
    demangled = result.stdout.split("\n")
    if result.returncode != 0 or len(demangled) < len(names):
        return {name: name for name in names}
    return dict(zip(names, demangled))


def fold(stacks, root):
    """Counts the samples of each distinct stack, root first; cut at the outermost frame matching `root`."""
    counts = collections.Counter()
    total = 0
    for frames in stacks:
        total += 1
        path = list(reversed(frames))
        if root:
            matches = [i for i, frame in enumerate(path) if root.search(frame)]
            if not matches:
                continue
            path = path[matches[0]:]
        counts[tuple(path)] += 1
    return counts, total


def build_tree(counts):
    """A tree of frames: each node's total samples and its children by name."""
    tree = {"name": "all", "value": 0, "children": {}}
    for path, count in counts.items():
        tree["value"] += count
        node = tree
        for frame in path:
            child = node["children"].setdefault(frame, {"name": frame, "value": 0, "children": {}})
            child["value"] += count
            node = child
    return tree


def colour(name):
    """A warm colour that stays the same for a name from one graph to the next."""
    digest = hashlib.sha256(name.encode()).digest()
    return "rgb({},{},{})".format(205 + digest[0] % 50, 80 + digest[1] % 130, digest[2] % 55)


def render(tree, title, subtitle, width=1200, row=16, minimum=0.1):
    """The SVG text: frames as rectangles, the root at the bottom, children left to right by name."""
    depth = 0
    rects = []
    total = tree["value"] or 1
    scale = (width - 20) / total

    def walk(node, x, level):
        nonlocal depth
        w = node["value"] * scale
        if w < minimum:
            return
        depth = max(depth, level)
        rects.append((x, level, w, node))
        child_x = x
        for name in sorted(node["children"]):
            child = node["children"][name]
            walk(child, child_x, level + 1)
            child_x += child["value"] * scale

    walk(tree, 10, 0)
    height = (depth + 1) * row + 70
    out = [
        '<?xml version="1.0" standalone="no"?>',
        '<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}">'
        .format(width, height, width, height),
        '<style>text {{ font-family: Verdana, sans-serif; font-size: 11px; fill: #000; }}'
        ' .title {{ font-size: 16px; }} .sub {{ font-size: 11px; fill: #555; }}</style>'.format(),
        '<rect x="0" y="0" width="{}" height="{}" fill="#fff8ee"/>'.format(width, height),
        '<text class="title" x="{}" y="22" text-anchor="middle">{}</text>'.format(width / 2, html.escape(title)),
        '<text class="sub" x="{}" y="40" text-anchor="middle">{}</text>'.format(width / 2, html.escape(subtitle)),
    ]
    for x, level, w, node in rects:
        y = height - (level + 1) * row - 10
        share = 100.0 * node["value"] / total
        label = "{} ({} samples, {:.2f}%)".format(node["name"], node["value"], share)
        out.append('<g><title>{}</title><rect x="{:.2f}" y="{}" width="{:.2f}" height="{}" fill="{}" rx="2"/>'
                   .format(html.escape(label), x, y, w, row - 1, colour(node["name"])))
        characters = int((w - 6) / 7)
        if characters >= 3:
            text = node["name"] if len(node["name"]) <= characters else node["name"][:characters - 2] + ".."
            out.append('<text x="{:.2f}" y="{}">{}</text>'.format(x + 3, y + row - 4, html.escape(text)))
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--title", default="Flame graph")
    parser.add_argument("--root", help="only samples with a frame matching this regular expression, cut there")
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("input", nargs="?", help="perf script output (standard input when absent)")
    arguments = parser.parse_args()
    source = open(arguments.input, errors="replace") if arguments.input else sys.stdin
    stacks = list(read_stacks(source))
    names = demangler({frame for frames in stacks for frame in frames})
    stacks = [[names.get(frame, frame) for frame in frames] for frames in stacks]
    counts, total = fold(stacks, re.compile(arguments.root) if arguments.root else None)
    tree = build_tree(counts)
    if tree["value"] == 0:
        sys.exit("flamegraph.py: no sample matches" + (" --root " + arguments.root if arguments.root else ""))
    subtitle = "{} samples of {}{}".format(tree["value"], total, ", under " + arguments.root if arguments.root else "")
    sys.stdout.write(render(tree, arguments.title, subtitle, width=arguments.width))


if __name__ == "__main__":
    main()
