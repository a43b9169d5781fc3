; Java edges: method invocations, `new`, extends / implements, imports, parameter types.
(method_invocation) @call
(object_creation_expression type: (_) @call)
(superclass [(type_identifier) (generic_type) (scoped_type_identifier)] @inherit)
(super_interfaces (type_list [(type_identifier) (generic_type) (scoped_type_identifier)] @implement))
(extends_interfaces (type_list [(type_identifier) (generic_type) (scoped_type_identifier)] @inherit))
(import_declaration) @import
(formal_parameter type: [(type_identifier) (generic_type) (scoped_type_identifier)] @ref)
((local_variable_declaration type: [(type_identifier) (scoped_type_identifier)] @ref) (#not-eq? @ref "var"))
(field_declaration type: [(type_identifier) (scoped_type_identifier)] @ref)
(method_declaration type: [(type_identifier) (scoped_type_identifier)] @ref)
