"""Scripted experiments that reproduce the papers' tables with the suite's agents."""
