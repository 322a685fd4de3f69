"""What RunCheck ran, in order: a declined call must leave nothing here."""

RUNS: list[str] = []
