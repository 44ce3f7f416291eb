"""The retrieval agents, one module each, each declared by one line in citefinder.retrieve.registry."""
