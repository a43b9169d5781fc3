; Kotlin edges: calls, superclass (constructor call) and interfaces, imports.
(call_expression . (_) @call)
(delegation_specifier (constructor_invocation (user_type) @inherit))
(delegation_specifier (user_type) @implement)
(import_header) @import
; declared types: parameters, properties, constructor properties, return types
(parameter (user_type) @ref)
(parameter (nullable_type (user_type) @ref))
(class_parameter (user_type) @ref)
(class_parameter (nullable_type (user_type) @ref))
(variable_declaration (user_type) @ref)
(variable_declaration (nullable_type (user_type) @ref))
(function_declaration (user_type) @ref)
(function_declaration (nullable_type (user_type) @ref))
