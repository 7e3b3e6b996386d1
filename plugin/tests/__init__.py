"""Tests of the Hermes bridge plugin (standard library unittest).

Run from the repository root: ``python3 -m unittest discover -s plugin/tests -t . -v``.
"""
