"""Partners: switching partners, predictions, regret and best-response references (#35)."""
