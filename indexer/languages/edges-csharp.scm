; C# edges: invocations, `new`, base lists, usings, parameter types.
(invocation_expression function: (_) @call)
(object_creation_expression type: (_) @call)
(base_list [(identifier) (generic_name) (qualified_name)] @inherit)
(using_directive) @import
(parameter type: [(identifier) (generic_name) (qualified_name)] @ref)
(parameter type: (nullable_type type: [(identifier) (qualified_name)] @ref))
; declared types: locals and fields, properties, return types
(variable_declaration type: [(identifier) (qualified_name)] @ref)
(variable_declaration type: (nullable_type type: [(identifier) (qualified_name)] @ref))
(property_declaration type: [(identifier) (qualified_name)] @ref)
(property_declaration type: (nullable_type type: [(identifier) (qualified_name)] @ref))
(method_declaration returns: [(identifier) (qualified_name)] @ref)
(method_declaration returns: (nullable_type type: [(identifier) (qualified_name)] @ref))
(local_function_statement type: [(identifier) (qualified_name)] @ref)
