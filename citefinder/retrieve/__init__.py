"""Retrieval: the Agent protocol and run_agent (base), one AgentSpec per agent (registry), the query side
(query/) and one module per retrieval agent (agents/)."""
