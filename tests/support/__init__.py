"""What the tests share: fixtures, strategies, workloads, the app in a subprocess."""
