; Swift edges: calls, supertypes and conformances (extensions: @implement), imports.
(call_expression . (_) @call)
(class_declaration declaration_kind: "extension" (inheritance_specifier inherits_from: (_) @implement))
(class_declaration declaration_kind: ["class" "struct" "enum" "actor"] (inheritance_specifier inherits_from: (_) @inherit))
(protocol_declaration (inheritance_specifier inherits_from: (_) @inherit))
(import_declaration) @import
(parameter (user_type) @ref)
(parameter (optional_type (user_type) @ref))
(type_annotation (user_type) @ref)
(type_annotation (optional_type (user_type) @ref))
(function_declaration (user_type) @ref)
(function_declaration (optional_type (user_type) @ref))
(protocol_function_declaration (user_type) @ref)
(protocol_function_declaration (optional_type (user_type) @ref))
