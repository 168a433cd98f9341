"""Experiment drivers shared by chapters and benchmarks: data preparation and repeated runs, no algorithms."""
