"""The Cite page's parts, by job: the draft, the fill, the picks, a slot's card, the results."""
