"""Answer-sized context: the best few spans of a search's candidates under a token
budget (units, their scores, their vectors, the packer)."""
