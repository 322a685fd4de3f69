"""janito's tools inside other agent frameworks, every call through janito's dispatch.

One module per framework, each importing its framework when it is itself imported, never
before (importing ``janito_core`` or this package imports none of them):

- ``janito_core.integrations.pydantic_ai``: ``JanitoToolset``, a pydantic-ai toolset;
- ``janito_core.integrations.openai_agents``: ``tools()``, FunctionTools of the OpenAI
  Agents SDK, and ``reject()``;
- ``janito_core.integrations.langchain``: ``tools()``, LangChain ``BaseTool``s;
- ``janito_core.integrations.llm``: ``tools()``, ``llm.Tool``s, ``before_call()``, and
  the llm plugin that offers each janito toolset as a toolbox.

Whatever the framework, a call is validated, gated by privileges and the policy,
journaled, logged and traced as ``janito_core.call_tool`` does it, and the model gets
janito's JSON result. A call the policy asks about goes through the framework's own
approval (docs/integrations.md).
"""
