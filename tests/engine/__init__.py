"""Tests of the engine library."""
