"""One search of one version of a collection: its snapshot and the parts opened for
it, each side's candidates, the list of steps from candidates to hits."""
