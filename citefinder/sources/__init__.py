"""Sources of the literature beside the user's library: one small protocol (:mod:`.base`), the same-work
decision every source's answers go through (:mod:`.same`), and what opens a source by name (:mod:`.registry`).
The first implementation is a local literature library (a library folder built from the public dumps); the
online services plug in beside it."""
