; Python edges: calls, base classes, imports, annotation and decorator references.
(call function: (_) @call)
(class_definition superclasses: (argument_list [(identifier) (attribute)] @inherit))
(class_definition superclasses: (argument_list (subscript value: [(identifier) (attribute)] @inherit)))
(import_statement) @import
(import_from_statement) @import
(type [(identifier) (attribute)] @ref)
(type (generic_type (identifier) @ref))
(decorator [(identifier) (attribute)] @ref)
(type (binary_operator [(identifier) (attribute)] @ref))
(module (assignment left: (identifier) right: [(identifier) (attribute)] @ref))
(class_definition body: (block (assignment left: (identifier) right: [(identifier) (attribute)] @ref)))
(type (subscript value: [(identifier) (attribute)] @ref))
(type (subscript subscript: [(identifier) (attribute)] @ref))
(type (subscript subscript: (subscript subscript: [(identifier) (attribute)] @ref)))
(type (binary_operator (subscript value: [(identifier) (attribute)] @ref)))
(type (binary_operator (subscript subscript: [(identifier) (attribute)] @ref)))
; the type a `cast(T, v)` states
(call
  function: [(identifier) (attribute)] @_cast
  arguments: (argument_list . [(identifier) (attribute)] @ref)
  (#match? @_cast "^((typing|t)[.])?cast$"))
; the class an `isinstance(x, C)` test names (inside its `if`, `x` is a `C`)
(call
  function: (identifier) @_isinstance
  arguments: (argument_list . (identifier) . [(identifier) (attribute)] @ref)
  (#eq? @_isinstance "isinstance"))
; the class an `except C as e` catches (inside its block, `e` is a `C`)
(except_clause (as_pattern . [(identifier) (attribute)] @ref))
; a parameter's default written as a name (`policy=compat32`): what that name holds types it
; (not `lookup=lookup`, a nested function capturing an outer name)
(default_parameter
  name: (identifier) @_param
  value: (identifier) @ref
  (#not-eq? @_param @ref))
; a function's `root = logging.root`: the module-level variable it reads types the target;
; `close = self.target.close` / `fix = self._fix`: calling the target calls that method
; (edges.py keeps the edge only where the binder marks it: not when `logging` is a local)
(assignment
  left: (identifier)
  right: (attribute) @held)
; `self.factory = mod.Document.implementation` in a method: what that class's attribute holds
(assignment
  left: (attribute object: (identifier) @_self (#eq? @_self "self"))
  right: (attribute) @held)
; `for p in cmd.params`: the attribute's items type the loop variable, read at query time
; from what `cmd` holds (edges.py keeps the edge only where the binder marks it)
(for_statement right: (attribute) @held)
(for_in_clause right: (attribute) @held)
; a parameter's `None` default replaced (`if cls is None: cls = JSONEncoder`): what the name
; holds, or the class calling it makes (edges.py keeps the edge only where the binder marks it)
(if_statement
  condition: [(comparison_operator . (identifier) . (none) .) (not_operator argument: (identifier))]
  consequence: (block . (assignment left: (identifier) right: (identifier) @held)))
; a method's `return self`: it returns its receiver (`with Session() as s` holds a Session)
(return_statement (identifier) @ref (#eq? @ref "self"))
; a forward reference written as a string (`-> "Context"`, `Optional["m.Context"]`): the
; name inside it (edges.py keeps only a plain dotted name outside `Literal` / `Annotated`)
(type (string) @quoted)
(type (subscript subscript: (string) @quoted))
