"""A small toolset for the frameworks' tests: a read tool, a write tool, a tool that runs
something. Its tools are added to a registry by hand, or found as toolset ``notes`` of a
distribution the llm tests write."""
