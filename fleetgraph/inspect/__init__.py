"""Viewers of programs for people: text, DOT, SVG, the HTML report and diffs; they read programs and run nothing."""
