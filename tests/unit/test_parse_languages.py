"""Per-language definitions: symbols, qualified names, kinds and chunks from real grammars."""

from __future__ import annotations

import pytest

from codesift.indexer.model import ChunkKind, EdgeKind, ParseResult, SymbolKind
from codesift.indexer.parse import parse_file
from codesift.indexer.settings import ChunkSettings

# min_lines=1: nothing is tiny, so every definition keeps a chunk of its own.
NO_MERGE = ChunkSettings(min_lines=1)

# One snippet per language: a class with a method, and a function (or a second type).
SNIPPETS: dict[str, str] = {
    "python": '''\
import os


class Greeter(Base):
    """Says hello."""

    def greet(self, name):
        return f"hi {name}"


def main():
    Greeter().greet("x")
''',
    "javascript": """\
import x from "y";

class Greeter extends Base {
  greet(name) {
    return `hi ${name}`;
  }
}

function main() {
  new Greeter().greet("x");
}
""",
    "typescript": """\
import x from "y";

export class Greeter implements Base {
  greet(name: string): string {
    return `hi ${name}`;
  }
}

export function main(): void {
  new Greeter().greet("x");
}
""",
    "tsx": """\
import React from "react";

class Greeter extends React.Component {
  render() {
    return <div>hi</div>;
  }
}

function main() {
  return <Greeter />;
}
""",
    "go": """\
package main

type Greeter struct {
	name string
}

func (g *Greeter) Greet(name string) string {
	return "hi " + name
}

func main() {
	println("x")
}
""",
    "rust": """\
use std::fmt;

struct Greeter {
    name: String,
}

impl Greeter {
    fn greet(&self, name: &str) -> String {
        format!("hi {}", name)
    }
}

fn main() {
    println!("x");
}
""",
    "java": """\
package demo;

public class Greeter extends Base {
    public String greet(String name) {
        return "hi " + name;
    }
}

interface Main {
    void main();
}
""",
    "c": """\
#include <stdio.h>

struct greeter {
    int n;
};

static int greet(struct greeter *g) {
    return g->n;
}

int main(void) {
    return 0;
}
""",
    "cpp": """\
#include <string>

class Greeter {
public:
    std::string greet(const std::string &name) {
        return "hi " + name;
    }
};

int main() {
    return 0;
}
""",
    "csharp": """\
using System;

public class Greeter : Base {
    public string Greet(string name) {
        return "hi " + name;
    }
}

static class Program {
    static void Main() { }
}
""",
    "swift": """\
import Foundation

class Greeter: Base {
    func greet(name: String) -> String {
        return "hi " + name
    }
}

func main() {
    print("x")
}
""",
    "kotlin": """\
package demo

class Greeter : Base() {
    fun greet(name: String): String {
        return "hi " + name
    }
}

fun main() {
    println("x")
}
""",
    "ruby": """\
require "set"

class Greeter < Base
  def greet(name)
    "hi #{name}"
  end
end

def main
  Greeter.new.greet("x")
end
""",
    "php": """\
<?php

class Greeter extends Base {
    public function greet($name) {
        return "hi " . $name;
    }
}

function main() {
    echo "x";
}
""",
}

# (chunk kind, start, end, symbol), (qualified name, symbol kind, container)
EXPECTED: dict[str, tuple[list[tuple[str, int, int, str]], list[tuple[str, str, str]]]] = {
    "python": (
        [("BLOCK", 1, 1, ""), ("CLASS", 4, 8, "Greeter"), ("FUNCTION", 11, 12, "main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "javascript": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 7, "Greeter"), ("FUNCTION", 9, 11, "main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "typescript": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 7, "Greeter"), ("FUNCTION", 9, 11, "main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "tsx": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 7, "Greeter"), ("FUNCTION", 9, 11, "main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.render", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "go": (
        [
            ("BLOCK", 1, 1, ""),
            ("CLASS", 3, 5, "Greeter"),
            ("METHOD", 7, 9, "Greeter.Greet"),
            ("FUNCTION", 11, 13, "main"),
        ],
        [
            ("Greeter", "STRUCT", ""),
            ("Greeter.Greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "rust": (
        [
            ("BLOCK", 1, 1, ""),
            ("CLASS", 3, 5, "Greeter"),
            ("CLASS", 7, 11, "Greeter"),
            ("FUNCTION", 13, 15, "main"),
        ],
        [
            ("Greeter", "STRUCT", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "java": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 7, "Greeter"), ("CLASS", 9, 11, "Main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("Main", "INTERFACE", ""),
            ("Main.main", "METHOD", "Main"),
        ],
    ),
    "c": (
        [
            ("BLOCK", 1, 1, ""),
            ("CLASS", 3, 5, "greeter"),
            ("FUNCTION", 7, 9, "greet"),
            ("FUNCTION", 11, 13, "main"),
        ],
        [("greeter", "STRUCT", ""), ("greet", "FUNCTION", ""), ("main", "FUNCTION", "")],
    ),
    "cpp": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 8, "Greeter"), ("FUNCTION", 10, 12, "main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "csharp": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 7, "Greeter"), ("CLASS", 9, 11, "Program")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.Greet", "METHOD", "Greeter"),
            ("Program", "CLASS", ""),
            ("Program.Main", "METHOD", "Program"),
        ],
    ),
    "swift": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 7, "Greeter"), ("FUNCTION", 9, 11, "main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "kotlin": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 7, "Greeter"), ("FUNCTION", 9, 11, "main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "ruby": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 7, "Greeter"), ("FUNCTION", 9, 11, "main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
    "php": (
        [("BLOCK", 1, 1, ""), ("CLASS", 3, 7, "Greeter"), ("FUNCTION", 9, 11, "main")],
        [
            ("Greeter", "CLASS", ""),
            ("Greeter.greet", "METHOD", "Greeter"),
            ("main", "FUNCTION", ""),
        ],
    ),
}


def parse(language: str, source: str, settings: ChunkSettings = NO_MERGE) -> ParseResult:
    return parse_file("src/file", source, language, project="demo", settings=settings)


def selection_starts(result: ParseResult) -> dict[str, tuple[int, int]]:
    """Each symbol's qualified name → where its name starts (line, column)."""
    return {
        s.qualified_name: (s.selection_range.start.line, s.selection_range.start.column)
        for s in result.symbols
    }


def text_at(source: str, line: int, start: int, end: int) -> str:
    return source.split("\n")[line - 1][start:end]


@pytest.mark.parametrize("language", sorted(SNIPPETS))
def test_class_method_and_function_give_symbols_and_chunks(language: str) -> None:
    source = SNIPPETS[language]
    result = parse(language, source)
    want_chunks, want_symbols = EXPECTED[language]

    assert not result.had_errors
    assert [(c.kind.name, c.start_line, c.end_line, c.symbol) for c in result.chunks] == want_chunks
    assert [(s.qualified_name, s.kind.name, s.container) for s in result.symbols] == want_symbols
    by_id = {c.id: c for c in result.chunks}
    for symbol in result.symbols:
        sel = symbol.selection_range
        assert sel.start.line == sel.end.line
        assert text_at(source, sel.start.line, sel.start.column, sel.end.column) == symbol.name
        assert symbol.qualified_name.endswith(symbol.name)
        assert symbol.range.start.line <= sel.start.line <= symbol.range.end.line
        holder = by_id[symbol.chunk_id]
        assert holder.start_line <= sel.start.line <= holder.end_line
        assert symbol.path == "src/file" and symbol.language == language


def symbols_of(result: ParseResult) -> dict[str, tuple[SymbolKind, str]]:
    return {s.qualified_name: (s.kind, s.container) for s in result.symbols}


def test_go_method_is_qualified_by_its_receiver_type() -> None:
    result = parse(
        "go",
        "package m\n\nfunc (s *Server[T]) Start() {}\n\ntype Store interface {\n\tGet() int\n}\n",
    )
    assert symbols_of(result) == {
        "Server.Start": (SymbolKind.METHOD, "Server"),
        "Store": (SymbolKind.INTERFACE, ""),
        "Store.Get": (SymbolKind.METHOD, "Store"),
    }
    assert result.chunks[1].kind is ChunkKind.METHOD


def test_rust_impl_and_trait_qualify_their_functions() -> None:
    source = (
        "trait Shape {\n    fn area(&self) -> f64;\n}\n\n"
        "impl Shape for Point<T> {\n    fn area(&self) -> f64 { 0.0 }\n}\n\n"
        "mod geo {\n    pub fn dist() {}\n}\n"
    )
    assert symbols_of(parse("rust", source)) == {
        "Shape": (SymbolKind.INTERFACE, ""),
        "Shape.area": (SymbolKind.METHOD, "Shape"),
        "Point.area": (SymbolKind.METHOD, "Point"),
        "geo": (SymbolKind.MODULE, ""),
        "geo.dist": (SymbolKind.FUNCTION, "geo"),
    }


def test_cpp_out_of_line_members_and_namespaces() -> None:
    source = (
        "namespace ns {\nclass Widget {\npublic:\n    Widget();\n    void draw();\n};\n}\n\n"
        "void ns::Widget::draw() {\n}\n\nns::Widget::Widget() {}\n\n"
        "template <typename T> T twice(T x) { return x + x; }\n"
    )
    assert symbols_of(parse("cpp", source)) == {
        "ns": (SymbolKind.NAMESPACE, ""),
        "ns.Widget": (SymbolKind.CLASS, "ns"),
        "ns.Widget.Widget": (SymbolKind.CONSTRUCTOR, "ns.Widget"),
        "ns.Widget.draw": (SymbolKind.METHOD, "ns.Widget"),
        "twice": (SymbolKind.FUNCTION, ""),
    }


def test_c_typedef_struct_takes_the_typedef_name_and_header_guards_are_seen_through() -> None:
    source = (
        "#ifndef FOO_H\n#define FOO_H\ntypedef struct {\n    int x;\n} Foo;\n"
        "enum color { RED };\nint make(Foo *f) {\n    return f->x;\n}\n#endif\n"
    )
    assert symbols_of(parse("c", source)) == {
        "Foo": (SymbolKind.STRUCT, ""),
        "color": (SymbolKind.ENUM, ""),
        "make": (SymbolKind.FUNCTION, ""),
    }


def test_csharp_namespace_qualifies_types_and_constructors_are_constructors() -> None:
    source = (
        "namespace App.Core {\n    public class User {\n        public User() {}\n"
        "        public string Name { get; set; }\n    }\n    interface IUser { }\n}\n"
    )
    assert symbols_of(parse("csharp", source)) == {
        "App.Core": (SymbolKind.NAMESPACE, ""),
        "App.Core.User": (SymbolKind.CLASS, "App.Core"),
        "App.Core.User.User": (SymbolKind.CONSTRUCTOR, "App.Core.User"),
        "App.Core.User.Name": (SymbolKind.PROPERTY, "App.Core.User"),
        "App.Core.IUser": (SymbolKind.INTERFACE, "App.Core"),
    }


def test_csharp_definitions_inside_preprocessor_blocks_are_symbols() -> None:
    # Newtonsoft.Json: whole files inside `#if HAVE_ASYNC`, members inside `#if … #else`
    source = (
        "#if HAVE_ASYNC\nusing System;\nnamespace App\n{\n    public class Reader\n    {\n"
        "#if NET\n        public void Read() { }\n#else\n        public void ReadOld() { }\n#endif\n"
        "    }\n}\n#endif\n"
    )
    assert symbols_of(parse("csharp", source)) == {
        "App": (SymbolKind.NAMESPACE, ""),
        "App.Reader": (SymbolKind.CLASS, "App"),
        "App.Reader.Read": (SymbolKind.METHOD, "App.Reader"),
        "App.Reader.ReadOld": (SymbolKind.METHOD, "App.Reader"),
    }


def test_typescript_arrow_functions_interfaces_enums_and_namespaces() -> None:
    source = (
        "export const handler = async (req: Req) => {\n  return 1;\n};\n"
        "export interface Shape {\n  area(): number;\n}\n"
        "enum Color { Red }\nconst LIMIT = 3;\nnamespace NS {\n  export function inner() {}\n}\n"
        "class A {\n  constructor() {}\n}\n"
    )
    assert symbols_of(parse("typescript", source)) == {
        "handler": (SymbolKind.FUNCTION, ""),
        "Shape": (SymbolKind.INTERFACE, ""),
        "Shape.area": (SymbolKind.METHOD, "Shape"),
        "Color": (SymbolKind.ENUM, ""),
        "LIMIT": (SymbolKind.CONSTANT, ""),
        "NS": (SymbolKind.NAMESPACE, ""),
        "NS.inner": (SymbolKind.FUNCTION, "NS"),
        "A": (SymbolKind.CLASS, ""),
        "A.constructor": (SymbolKind.CONSTRUCTOR, "A"),
    }


def test_typescript_const_made_by_a_call_on_a_function_is_a_chunk_of_its_own() -> None:
    """zod v4 defines each schema as `export const $ZodLiteral = core.$constructor("…",
    (inst, def) => {…})`: a constant, so it was merged into a block with the interfaces
    and constants around it (`schemas.ts:3135-3213 BLOCK`). A constant whose value is a
    call taking a function (`$constructor`, `forwardRef`, `memo`) is chunked as the
    function it holds; its symbol stays a constant. A call with no function stays a block."""
    source = (
        "export interface $ZodLiteral {\n  values: Set<string>;\n}\n\n"
        "export const $ZodLiteral: core.$constructor<$ZodLiteral> = /*@__PURE__*/ core.$constructor(\n"
        '  "$ZodLiteral",\n  (inst, def) => {\n    $ZodType.init(inst, def);\n'
        "    inst._zod.values = new Set(def.values);\n  }\n);\n\n"
        'const NAMES = new Set(["a", "b"]);\nconst LIMIT = Math.max(1, 2);\n'
    )
    result = parse("typescript", source)
    literal = [c for c in result.chunks if c.start_line == 5]
    assert [(c.kind, c.end_line, c.symbol) for c in literal] == [(ChunkKind.FUNCTION, 11, "$ZodLiteral")]
    assert [(s.name, s.kind) for s in result.symbols if s.selection_range.start.line == 5] == [
        ("$ZodLiteral", SymbolKind.CONSTANT)
    ]
    assert [c.kind for c in result.chunks if c.start_line == 13] == [ChunkKind.BLOCK]


def test_swift_struct_protocol_extension_and_init() -> None:
    source = (
        "protocol Shape {\n    func area() -> Double\n}\n"
        "struct Circle: Shape {\n    init(r: Double) {}\n    func area() -> Double { 1 }\n}\n"
        "extension Circle {\n    func grow() {}\n}\nenum Dir { case up }\n"
    )
    assert symbols_of(parse("swift", source)) == {
        "Shape": (SymbolKind.INTERFACE, ""),
        "Shape.area": (SymbolKind.METHOD, "Shape"),
        "Circle": (SymbolKind.STRUCT, ""),
        "Circle.init": (SymbolKind.CONSTRUCTOR, "Circle"),
        "Circle.area": (SymbolKind.METHOD, "Circle"),
        "Circle.grow": (SymbolKind.METHOD, "Circle"),
        "Dir": (SymbolKind.ENUM, ""),
    }


def test_swift_subscript_is_named_subscript() -> None:
    """A subscript has no name: it is `subscript`, not its result type (vapor's cache read
    `Cache.UnsafeAuthenticationBox<A>?`)."""
    source = (
        "struct Cache {\n    subscript<A>(_ type: A.Type) -> Box<A>? where A: P {\n"
        "        get { nil }\n    }\n}\n"
    )
    assert symbols_of(parse("swift", source)) == {
        "Cache": (SymbolKind.STRUCT, ""),
        "Cache.subscript": (SymbolKind.METHOD, "Cache"),
    }


def test_swift_of_today_parses_without_errors() -> None:
    """Typed throws, ``borrowing`` / ``consume``, macros: the pinned tree-sitter-swift reads them."""
    source = (
        "struct S {\n"
        "    func load() throws(LoadError) -> Int { 1 }\n"
        "    func take(_ x: borrowing Item) { let y = consume x; use(y) }\n"
        "    func check() throws { let v = try #require(value); #expect(v == 1) }\n"
        "    func last() {}\n"
        "}\n"
    )
    result = parse("swift", source)
    assert not result.had_errors
    assert set(symbols_of(result)) == {"S", "S.load", "S.take", "S.check", "S.last"}


def test_kotlin_interface_object_and_enum_class() -> None:
    source = (
        "interface Shape { fun area(): Double }\nobject Registry {\n    fun add() {}\n}\n"
        "enum class Dir { UP }\n"
    )
    assert symbols_of(parse("kotlin", source)) == {
        "Shape": (SymbolKind.INTERFACE, ""),
        "Shape.area": (SymbolKind.METHOD, "Shape"),
        "Registry": (SymbolKind.CLASS, ""),
        "Registry.add": (SymbolKind.METHOD, "Registry"),
        "Dir": (SymbolKind.ENUM, ""),
    }


def test_ruby_module_nesting_and_initialize() -> None:
    source = (
        "module Outer\n  class Inner\n    def initialize(x)\n      @x = x\n    end\n\n"
        "    def self.build\n    end\n  end\nend\n"
    )
    assert symbols_of(parse("ruby", source)) == {
        "Outer": (SymbolKind.MODULE, ""),
        "Outer.Inner": (SymbolKind.CLASS, "Outer"),
        "Outer.Inner.initialize": (SymbolKind.CONSTRUCTOR, "Outer.Inner"),
        "Outer.Inner.build": (SymbolKind.METHOD, "Outer.Inner"),
    }


def test_ruby_methods_in_a_singleton_class_are_the_class_methods() -> None:
    """`class << self … end` holds a class's class methods (sinatra's `before`, `after`,
    `get`, `set` …: 670 lines of `Sinatra::Base`). It was a plain statement, so its methods
    were no symbols and it was cut every 80 lines as a class part. Its methods are now
    the class's methods, each a chunk and a symbol."""
    source = (
        "module Sinatra\n  class Base\n    class << self\n"
        "      # Define a before filter.\n      def before(path = nil, &block)\n"
        "        add_filter(:before, path, &block)\n      end\n\n"
        "      def after(path = nil, &block)\n        add_filter(:after, path, &block)\n"
        "      end\n    end\n  end\nend\n"
    )
    result = parse("ruby", source, ChunkSettings(max_lines=6, min_lines=0))
    assert symbols_of(result) == {
        "Sinatra": (SymbolKind.MODULE, ""),
        "Sinatra.Base": (SymbolKind.CLASS, "Sinatra"),
        "Sinatra.Base.before": (SymbolKind.METHOD, "Sinatra.Base"),
        "Sinatra.Base.after": (SymbolKind.METHOD, "Sinatra.Base"),
    }
    before = next(c for c in result.chunks if c.symbol == "Sinatra.Base.before")
    assert (before.start_line, before.end_line, before.kind) == (4, 7, ChunkKind.METHOD)
    assert not result.had_errors


def test_php_interface_trait_and_constructor() -> None:
    source = (
        "<?php\nnamespace App;\ninterface Repo { public function find($id); }\n"
        "trait Loggable { function log() {} }\n"
        "class User {\n    public function __construct() {}\n}\n"
    )
    assert symbols_of(parse("php", source)) == {
        "App": (SymbolKind.NAMESPACE, ""),
        "Repo": (SymbolKind.INTERFACE, ""),
        "Repo.find": (SymbolKind.METHOD, "Repo"),
        "Loggable": (SymbolKind.INTERFACE, ""),
        "Loggable.log": (SymbolKind.METHOD, "Loggable"),
        "User": (SymbolKind.CLASS, ""),
        "User.__construct": (SymbolKind.CONSTRUCTOR, "User"),
    }
    braced = parse("php", "<?php\nnamespace App\\Models {\n    class Post {}\n}\n")
    assert symbols_of(braced) == {
        "App.Models": (SymbolKind.NAMESPACE, ""),
        "App.Models.Post": (SymbolKind.CLASS, "App.Models"),
    }


def test_java_nested_types_enum_methods_and_constructor() -> None:
    source = (
        "class Outer {\n    Outer() {}\n    static class Inner {\n        void run() {}\n    }\n"
        "    enum Mode {\n        A;\n        void flip() {}\n    }\n}\n"
    )
    assert symbols_of(parse("java", source)) == {
        "Outer": (SymbolKind.CLASS, ""),
        "Outer.Outer": (SymbolKind.CONSTRUCTOR, "Outer"),
        "Outer.Inner": (SymbolKind.CLASS, "Outer"),
        "Outer.Inner.run": (SymbolKind.METHOD, "Outer.Inner"),
        "Outer.Mode": (SymbolKind.ENUM, "Outer"),
        "Outer.Mode.flip": (SymbolKind.METHOD, "Outer.Mode"),
    }


def test_python_decorators_are_in_the_range_and_module_names_are_variables() -> None:
    source = (
        "MAX = 3\nlimit = 4\n\n\n@dataclass\nclass Point:\n    def __init__(self):\n"
        "        pass\n\n    @property\n    def norm(self):\n        return 0\n"
    )
    result = parse("python", source)
    assert symbols_of(result) == {
        "MAX": (SymbolKind.CONSTANT, ""),
        "limit": (SymbolKind.VARIABLE, ""),
        "Point": (SymbolKind.CLASS, ""),
        "Point.__init__": (SymbolKind.CONSTRUCTOR, "Point"),
        "Point.norm": (SymbolKind.METHOD, "Point"),
    }
    point = next(s for s in result.symbols if s.name == "Point")
    norm = next(s for s in result.symbols if s.name == "norm")
    assert (point.range.start.line, point.selection_range.start.line) == (5, 6)
    assert (norm.range.start.line, norm.range.start.column) == (10, 4)
    assert (norm.selection_range.start.line, norm.selection_range.start.column) == (11, 8)


def test_generic_grammars_find_functions_by_node_type_names() -> None:
    lua = parse("lua", "local M = {}\n\nfunction M.greet(name)\n  return name\nend\n\nreturn M\n")
    assert [s.qualified_name for s in lua.symbols] == ["M.greet"]
    assert [c.kind for c in lua.chunks] == [ChunkKind.BLOCK, ChunkKind.FUNCTION, ChunkKind.BLOCK]
    bash = parse("bash", "#!/bin/bash\nset -e\n\ngreet() {\n  echo hi\n}\n\ngreet\n")
    assert [(s.name, s.kind) for s in bash.symbols] == [("greet", SymbolKind.FUNCTION)]


def test_lua_functions_and_tables_of_functions_assigned_to_names_are_definitions() -> None:
    """Lua defines as often by assignment as by `function M.f()`: `M.setup = function(opts)`
    and lazy.nvim's tasks, `M.clone = { skip = function … end, run = function … end }`,
    were statements, so `manage/task/git.lua` was blocks of 60–80 lines with no symbol. A
    function assigned to a name is a function; a table constructor holding functions is a
    class-like scope whose function fields are its methods. A table of plain values stays a
    statement."""
    source = (
        "local M = {}\n\nM.clone = {\n  skip = function(plugin)\n    return plugin.installed\n  end,\n"
        '  ---@async\n  run = function(self)\n    self:spawn("git")\n  end,\n}\n\n'
        'M.setup = function(opts)\n  return opts\nend\n\nlocal defaults = {\n  root = "lazy",\n'
        "  git = { timeout = 120 },\n}\n\nreturn M\n"
    )
    result = parse("lua", source, ChunkSettings(max_lines=6, min_lines=0))
    assert symbols_of(result) == {
        "M.clone": (SymbolKind.CLASS, ""),
        "M.clone.skip": (SymbolKind.METHOD, "M.clone"),
        "M.clone.run": (SymbolKind.METHOD, "M.clone"),
        "M.setup": (SymbolKind.FUNCTION, ""),
    }
    run = next(c for c in result.chunks if c.symbol == "M.clone.run")
    assert (run.start_line, run.end_line, run.kind) == (7, 10, ChunkKind.METHOD)
    assert [c.kind for c in result.chunks if c.start_line == 17] == [ChunkKind.BLOCK]
    assert not result.had_errors


def test_swift_body_less_function_keeps_the_next_declaration() -> None:
    """`@_silgen_name(…) func f(…) -> T` has no body (the linker provides it); the grammar
    took the next function into an ERROR and its symbol was lost (vapor's Demangler.swift).
    Both are symbols now, at their own lines and columns, and their text is the source's."""
    source = (
        'import Foundation\n\n@_silgen_name("swift_demangle")\npublic\nfunc _impl(\n'
        "    name: UnsafePointer<CChar>?,\n    flags: UInt32\n) -> UnsafeMutablePointer<CChar>?\n\n"
        "func _name(_ mangled: String) -> String {\n    return _impl(name: nil, flags: 0).description\n}\n"
    )
    result = parse("swift", source)
    where = selection_starts(result)
    assert where == {"_impl": (5, 5), "_name": (10, 5)}
    assert not result.had_errors
    calls = [e for e in result.edges if e.kind is EdgeKind.CALL and e.to_name == "_impl"]
    assert [(e.line, e.column, e.from_symbol) for e in calls] == [(11, 11, "_name")]
    assert "{}" not in "".join(c.text for c in result.chunks)


def test_swift_warning_between_members_keeps_the_enclosing_type() -> None:
    """`#warning("…")` at column 0 between a struct's members (vapor's
    ConditionalResponseCompressionTests.swift) closed the struct in an ERROR: it was no
    symbol and its nested suites were named as top-level types. The diagnostic is blanked
    for the parse; every type keeps its container, line and column."""
    source = (
        "struct Outer {\n    struct Parsing {\n        func testUpdating() {\n        }\n"
        "        func testDecodingUnset() {\n        }\n        func testDecodingLastInvalid() {\n"
        "        }\n    }\n"
        '#warning("Bring back")\n'
        "/*\n    struct Server {\n        func assertCompressed(\n        ) async throws {\n        }\n"
        "        func assertUncompressed(\n        ) async throws {\n        }\n\n"
        "        func withCompressionApp(_ block: (Application) async throws -> Void) async throws {\n"
        "            try await withApp { app in\n"
        '                app.http.server.configuration.hostname = "127.0.0.1"\n'
        "            }\n        }\n    }\n    */\n"
        "    struct Routes {\n        func expectCompression(\n        ) async throws {\n"
        "            check()\n        }\n    }\n}\n"
    )
    result = parse("swift", source)
    where = selection_starts(result)
    assert where == {
        "Outer": (1, 7),
        "Outer.Parsing": (2, 11),
        "Outer.Parsing.testUpdating": (3, 13),
        "Outer.Parsing.testDecodingUnset": (5, 13),
        "Outer.Parsing.testDecodingLastInvalid": (7, 13),
        "Outer.Routes": (27, 11),
        "Outer.Routes.expectCompression": (28, 13),
    }
    calls = [
        (e.line, e.from_symbol) for e in result.edges if e.kind is EdgeKind.CALL and e.to_name == "check"
    ]
    assert calls == [(30, "Outer.Routes.expectCompression")]
    assert '#warning("Bring back")' in "".join(c.text for c in result.chunks)


def test_swift_source_location_lines_keep_the_declarations_between_them() -> None:
    """`#sourceLocation(file:line:)` / `#sourceLocation()` (generated code) between a type's
    members took the member after it into an ERROR; the lines are blanked for the parse."""
    source = (
        'struct S {\n#sourceLocation(file: "gen.swift", line: 10)\n    func g() {\n        h()\n    }\n'
        "#sourceLocation()\n}\n"
    )
    result = parse("swift", source)
    assert {s.qualified_name: s.selection_range.start.line for s in result.symbols} == {"S": 1, "S.g": 3}
    assert [(e.line, e.from_symbol) for e in result.edges if e.kind is EdgeKind.CALL] == [(4, "S.g")]


def test_cpp_class_with_an_attribute_macro_in_its_head_is_a_class() -> None:
    """`class ABSL_MUST_USE_RESULT Status final {`: the grammar took the macro for the
    class and `Status` for a declarator, so abseil's `Status`, `Mutex`, `AnyInvocable` and
    `flat_hash_map` were functions named after their base class. The macro is blanked
    for the parse; the class and its members are symbols at their own columns."""
    source = (
        "namespace absl {\n\nclass ABSL_MUST_USE_RESULT Status final {\n public:\n"
        "  bool ok() const { return rep_ == 0; }\n\n private:\n  int rep_;\n};\n\n"
        "template <class Sig>\nclass ABSL_NULLABILITY_COMPATIBLE ABSL_ATTRIBUTE_OWNER AnyInvocable\n"
        "    : private internal_any_invocable::Impl<Sig> {\n public:\n"
        "  AnyInvocable() noexcept = default;\n};\n\n"
        "struct FOO_BAR value;\n}  // namespace absl\n"
    )
    result = parse("cpp", source)
    where = {
        s.qualified_name: (s.kind, s.selection_range.start.line, s.selection_range.start.column)
        for s in result.symbols
    }
    assert where["absl.Status"] == (SymbolKind.CLASS, 3, 27)
    assert where["absl.Status.ok"][0] is SymbolKind.METHOD
    assert where["absl.AnyInvocable"] == (SymbolKind.CLASS, 12, 55)
    assert "ABSL_MUST_USE_RESULT" in "".join(c.text for c in result.chunks)


def test_a_header_the_cpp_grammar_reads_better_than_c_is_cpp() -> None:
    """`.h` is C by its extension, but abseil's 380 headers are C++: read as C, `namespace
    absl {` failed and each header was one function named `absl` (its API and its
    documentation no symbols). A `.h` that the C grammar reads with errors and the C++
    grammar with fewer is parsed as C++, and says so; a C header stays C."""
    cpp = (
        "#include <cstring>\n\nnamespace absl {\nABSL_NAMESPACE_BEGIN\n\n"
        "// Returns whether `haystack` contains `needle`.\n"
        "inline bool StrContains(absl::string_view haystack, absl::string_view needle) noexcept {\n"
        "  return haystack.find(needle, 0) != haystack.npos;\n}\n\n"
        "ABSL_NAMESPACE_END\n}  // namespace absl\n"
    )
    result = parse_file("absl/strings/match.h", cpp, "c", project="demo", settings=NO_MERGE)
    assert result.language == "cpp"
    assert {c.language for c in result.chunks} == {"cpp"}
    assert [s.qualified_name for s in result.symbols] == ["absl", "absl.StrContains"]
    assert not result.had_errors
    c = "#ifndef UTIL_H\n#define UTIL_H\nstruct point { int x, y; };\nint area(struct point *p);\n#endif\n"
    assert parse_file("lib/util.h", c, "c", project="demo", settings=NO_MERGE).language == "c"


def test_cpp_definition_after_a_lone_macro_line_is_a_symbol() -> None:
    """abseil's headers open with `ABSL_NAMESPACE_BEGIN` on a line of its own; the grammar,
    which does not expand macros, read it as the return type of `class Notification {…}`
    (one function named `Notification`, the class and its members no symbols). The lone
    macro lines are blanked for the parse: the class and its members are symbols at their
    own lines and columns, and the chunks' text is still the source's."""
    source = (
        "#include <atomic>\n\nnamespace absl {\nABSL_NAMESPACE_BEGIN\n\n"
        "class Notification {\n public:\n  void Notify();\n  bool HasBeenNotified() const {\n"
        "    return notified_;\n  }\n\n private:\n  bool notified_;\n};\n\n"
        "ABSL_NAMESPACE_END\n}  // namespace absl\n"
    )
    result = parse("cpp", source)
    where = {
        s.qualified_name: (s.kind, s.selection_range.start.line, s.selection_range.start.column)
        for s in result.symbols
    }
    assert where["absl.Notification"] == (SymbolKind.CLASS, 6, 6)
    assert where["absl.Notification.HasBeenNotified"][0] is SymbolKind.METHOD
    assert not result.had_errors
    assert "ABSL_NAMESPACE_BEGIN" in "".join(c.text for c in result.chunks)


def test_c_lone_macro_lines_that_parse_already_are_left_alone() -> None:
    """A file the grammar reads without errors is parsed as written, and a line continuing
    a `#define` is never blanked."""
    source = "#define WRAP(x) \\\n  DO_IT\n\nint main(void) {\n  return 0;\n}\n"
    result = parse("c", source)
    assert [(s.name, s.kind) for s in result.symbols] == [("main", SymbolKind.FUNCTION)]
    assert not result.had_errors


def test_haskell_definitions_are_symbols_with_their_signatures() -> None:
    """tree-sitter-haskell keeps a module's definitions under one `declarations` node, so
    every Haskell file was blocks with no symbol (pandoc, xmonad). Functions, data types,
    classes and instance members are definitions now; a signature and Haddock comment
    above a function are in its chunk, and a further equation is no second symbol."""
    source = (
        "module XMonad.Core (X, runX) where\n\nimport Data.Maybe (fromMaybe)\n\n"
        "-- | The state of the window manager.\ndata XState = XState\n"
        "    { windowset :: !WindowSet\n    , mapped    :: !(S.Set Window)\n    }\n\n"
        "-- | Run the X monad.\nrunX :: XConf -> XState -> X a -> IO (a, XState)\n"
        "runX c st (X a) = runStateT (runReaderT a c) st\nrunX _ _ _ = undefined\n\n"
        "class Default a where\n    def :: a\n\ninstance Default Int where\n    def = 0\n"
    )
    result = parse("haskell", source)
    assert [(s.qualified_name, s.kind, s.selection_range.start.line) for s in result.symbols] == [
        ("XState", SymbolKind.STRUCT, 6),
        ("runX", SymbolKind.FUNCTION, 13),
        ("Default", SymbolKind.INTERFACE, 16),
        ("Default.def", SymbolKind.METHOD, 20),
    ]
    run_x = next(c for c in result.chunks if c.symbol == "runX")
    assert (run_x.start_line, run_x.kind) == (11, ChunkKind.FUNCTION)
    assert "runX :: XConf" in run_x.text
    assert not result.had_errors


def test_elixir_modules_and_functions_are_symbols() -> None:
    """Elixir defines by calls (`defmodule`, `def`), which the generic mapping took for
    statements: every Elixir file was blocks with no symbol (ecto, plug). A module is
    named by its last part inside the rest (`Plug.Conn` is Conn in Plug), its functions
    are named through a `when` guard, `@doc` / `@spec` above a function are in its chunk,
    and a further clause is no second symbol."""
    source = (
        'defmodule Plug.Conn do\n  @moduledoc "The connection."\n  alias Plug.Conn.Unfetched\n\n'
        '  @doc "Assigns a value."\n  @spec assign(t, atom, term) :: t\n'
        "  def assign(%Conn{assigns: assigns} = conn, key, value) when is_atom(key) do\n"
        "    %{conn | assigns: Map.put(assigns, key, value)}\n  end\n\n"
        "  defp run(conn, []), do: conn\n  defp run(conn, [h | t]), do: run(h.(conn), t)\n\n"
        "  defprotocol Adapter do\n    def send_resp(payload, status)\n  end\nend\n"
    )
    result = parse("elixir", source)
    assert [(s.qualified_name, s.name, s.kind, s.selection_range.start.line) for s in result.symbols] == [
        ("Plug.Conn", "Conn", SymbolKind.MODULE, 1),
        ("Plug.Conn.assign", "assign", SymbolKind.FUNCTION, 7),
        ("Plug.Conn.run", "run", SymbolKind.FUNCTION, 11),
        ("Plug.Conn.Adapter", "Adapter", SymbolKind.INTERFACE, 14),
        ("Plug.Conn.Adapter.send_resp", "send_resp", SymbolKind.FUNCTION, 15),
    ]
    assign = next(c for c in result.chunks if c.symbol == "Plug.Conn.assign")
    assert (assign.start_line, assign.kind) == (5, ChunkKind.FUNCTION)
    assert "@spec assign" in assign.text
    assert not result.had_errors


def test_further_clauses_of_a_function_are_in_its_chunk() -> None:
    """A function's further equations (Haskell) and clauses (Elixir) are no symbols of
    their own; they were statements, so each landed in a block of its own between two
    definitions (ecto: 372 blocks opening on `defp`), named after the module. They now
    extend the function's chunk, with no second symbol."""
    haskell = (
        "module M where\n\n-- | Length.\nlen :: [a] -> Int\nlen [] = 0\n\n"
        "len (_:xs) = 1 + len xs\n\nother :: Int\nother = 1\n"
    )
    result = parse("haskell", haskell)
    assert [(c.kind, c.start_line, c.end_line, c.symbol) for c in result.chunks if c.symbol == "len"] == [
        (ChunkKind.FUNCTION, 3, 7, "len")
    ]
    assert [s.qualified_name for s in result.symbols] == ["len", "other"]
    elixir = (
        'defmodule Ecto.Association do\n  @doc "Checks."\n'
        "  defp check_action!(%{action: :replace}, _, _) do\n    :error\n  end\n\n"
        "  defp check_action!(_, _, _), do: :ok\n\n  def other, do: 1\nend\n"
    )
    result = parse("elixir", elixir)
    check = [(c.kind, c.start_line, c.end_line) for c in result.chunks if c.symbol.endswith("check_action!")]
    assert check == [(ChunkKind.FUNCTION, 2, 7)]
    assert [s.name for s in result.symbols] == ["Association", "check_action!", "other"]


def test_rust_items_inside_a_configuration_macro_are_symbols() -> None:
    """tokio wraps items in `cfg_rt! { … }`; the grammar reads a macro's braces as tokens,
    so `spawn_blocking` and `block_in_place` were no symbols. A top-level macro call whose
    braces open on items is read as its items (nested wrappers too, and a `macro_rules!`
    among them), at their own lines and columns; a macro whose braces hold a template
    (`$t`) outside a `macro_rules!` is left as it is."""
    source = (
        "use crate::task::JoinHandle;\n\ncfg_rt! {\n    /// Runs a blocking function.\n"
        "    pub fn spawn_blocking<F>(f: F) -> JoinHandle<F> {\n        todo!()\n    }\n\n"
        "    cfg_net! {\n        pub(crate) fn block_in_place() {}\n    }\n}\n\n"
        "impl_num! {\n    impl Num for $t { fn zero() -> Self { 0 } }\n}\n\n"
        "cfg_io! {\n    /// Readers.\n    macro_rules! read_impl {\n        ($name:ident) => {};\n    }\n"
        "    pub trait AsyncReadExt {}\n}\n"
    )
    result = parse("rust", source)
    where = selection_starts(result)
    assert where == {
        "spawn_blocking": (5, 11),
        "block_in_place": (10, 22),
        "read_impl": (20, 17),
        "AsyncReadExt": (23, 14),
    }
    assert not result.had_errors
    assert "cfg_rt! {" in "".join(c.text for c in result.chunks)
