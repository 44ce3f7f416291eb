"""The command line: arguments into workflow calls (citefinder.workflow), their results into lines and the one
writer's outputs. It holds no copy of the work (docs/ARCHITECTURE.md)."""
