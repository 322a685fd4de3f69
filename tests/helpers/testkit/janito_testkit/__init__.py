"""janito-testkit: the toolset janito-core's tests load through a real distribution."""
