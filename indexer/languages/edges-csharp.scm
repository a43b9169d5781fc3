; C# edges: invocations, `new`, base lists, usings, parameter types.
(invocation_expression function: (_) @call)
(object_creation_expression type: (_) @call)
(base_list [(identifier) (generic_name) (qualified_name)] @inherit)
(using_directive) @import
(parameter type: [(identifier) (generic_name) (qualified_name)] @ref)
