"""The query side: the slot's context cleaned and reformulated, the names and author mentions next to a marker."""
