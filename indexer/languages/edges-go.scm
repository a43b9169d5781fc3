; Go edges: calls, embedded interfaces, imports, parameter and literal types.
(call_expression function: (_) @call)
(interface_type (type_elem [(type_identifier) (qualified_type)] @inherit))
(import_spec) @import
(parameter_declaration type: [(type_identifier) (qualified_type)] @ref)
(parameter_declaration type: (pointer_type [(type_identifier) (qualified_type)] @ref))
(composite_literal type: [(type_identifier) (qualified_type)] @ref)
