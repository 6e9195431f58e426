"""Matrix-game tests (a package, so module names never clash with other games' tests)."""
