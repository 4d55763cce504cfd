"""Tests of the playground app."""
