//! The crate's import graph, read from its sources: which module names which. A module is a file
//! (`src/service/games.rs` is `service::games`, `src/db/mod.rs` is `db`); what an inline module
//! (`mod tests { … }`) names counts for its file. A path counts wherever it is written: in `use`
//! items, in code, in attributes and in macros (`#[schema(value_type = crate::…)]`), absolute
//! (`crate::`), relative (`super::`, `self::`, a child module's name) or through a name that a
//! `use` brought in. Names from other crates are not followed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::{self, Visit};

pub type Module = Vec<String>;

/// Every module of the library under `src/` (the binary's `main.rs` is a crate of its own) and
/// the modules each one names.
pub struct Graph {
    pub edges: BTreeMap<Module, BTreeSet<Module>>,
    /// For each edge, the first path that made it, as written.
    pub because: BTreeMap<(Module, Module), String>,
}

pub fn show(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

impl Graph {
    pub fn of_crate() -> Graph {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let sources = file_modules(&src)
            .into_iter()
            .map(|(module, file)| {
                let text = std::fs::read_to_string(&file).unwrap();
                (module, (file.display().to_string(), text))
            })
            .collect();
        Graph::of_sources(sources)
    }

    /// The graph of the given files: module → (where it is read from, its text).
    pub fn of_sources(sources: BTreeMap<Module, (String, String)>) -> Graph {
        let parsed: Vec<(Module, syn::File)> = sources
            .iter()
            .map(|(module, (file, text))| {
                let tree =
                    syn::parse_file(text).unwrap_or_else(|e| panic!("{file} does not parse: {e}"));
                (module.clone(), tree)
            })
            .collect();
        let files = &sources;
        // Inline modules are modules too (a relative path may start at one), owned by their file.
        let mut owner: BTreeMap<Module, Module> =
            files.keys().map(|m| (m.clone(), m.clone())).collect();
        for (module, tree) in &parsed {
            inline_modules(&tree.items, module, module, &mut owner);
        }
        let mut edges = BTreeMap::new();
        let mut because = BTreeMap::new();
        for (module, tree) in &parsed {
            let mut uses = Uses::default();
            uses.collect(&tree.items, module);
            let mut reader = Reader {
                owner: &owner,
                uses: &uses,
                scope: module.clone(),
                found: BTreeMap::new(),
            };
            reader.visit_file(tree);
            let mut named = reader.found;
            named.remove(module);
            for (to, path) in &named {
                because.insert((module.clone(), to.clone()), path.clone());
            }
            edges.insert(module.clone(), named.into_keys().collect());
        }
        Graph { edges, because }
    }

    /// Where the modules under `folder` name each other, each module seen as the child of
    /// `folder` it lies in (or `folder` itself, for its `mod.rs`): the circles among those.
    pub fn circles_in(&self, folder: &[String]) -> Vec<Vec<Module>> {
        let group = |m: &Module| -> Option<Module> {
            if !m.starts_with(folder) {
                return None;
            }
            Some(m[..(folder.len() + 1).min(m.len())].to_vec())
        };
        let mut grouped: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (from, tos) in &self.edges {
            let Some(a) = group(from) else { continue };
            let out = grouped.entry(a.clone()).or_default();
            for to in tos {
                if let Some(b) = group(to)
                    && b != a
                {
                    out.insert(b);
                }
            }
        }
        circles(&grouped)
    }

    /// A circle as words: each step with the path that makes it.
    pub fn describe(&self, folder: &[String], circle: &[Module]) -> String {
        // A member of the circle is either the folder's own `mod.rs` or a child with all below it.
        let within = |m: &Module, member: &Module| {
            if member.as_slice() == folder {
                m == member
            } else {
                m.starts_with(member)
            }
        };
        let mut out = show(&circle[0]);
        for pair in circle.windows(2) {
            let example = self
                .because
                .iter()
                .find(|((from, to), _)| within(from, &pair[0]) && within(to, &pair[1]))
                .map(|((from, _), path)| format!(" ({} names `{path}`)", show(from)))
                .unwrap_or_default();
            out.push_str(&format!(" → {}{example}", show(&pair[1])));
        }
        out
    }

    /// Every folder of the crate (the crate itself included): the modules with children.
    pub fn folders(&self) -> BTreeSet<Module> {
        self.edges
            .keys()
            .flat_map(|m| (0..m.len()).map(|n| m[..n].to_vec()))
            .collect()
    }
}

/// The strongly connected parts of a graph with more than one member, each as one circle
/// through them (`a → b → … → a`).
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    // Tarjan's algorithm, then a shortest way round inside each part.
    struct State<'g> {
        graph: &'g BTreeMap<Module, BTreeSet<Module>>,
        index: HashMap<&'g Module, usize>,
        low: HashMap<&'g Module, usize>,
        stack: Vec<&'g Module>,
        on_stack: BTreeSet<&'g Module>,
        parts: Vec<Vec<&'g Module>>,
    }
    fn connect<'g>(s: &mut State<'g>, v: &'g Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            if !s.graph.contains_key(w) {
                continue;
            }
            if !s.index.contains_key(w) {
                connect(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut part = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                part.push(w);
                if w == v {
                    break;
                }
            }
            s.parts.push(part);
        }
    }
    let mut s = State {
        graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        parts: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            connect(&mut s, v);
        }
    }
    s.parts
        .into_iter()
        .filter(|part| part.len() > 1)
        .map(|part| {
            let members: BTreeSet<&Module> = part.into_iter().collect();
            let start = *members.iter().next().unwrap();
            // Breadth first from `start` back to itself, inside the part.
            let mut came_from: BTreeMap<&Module, &Module> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([start]);
            'search: while let Some(v) = queue.pop_front() {
                for w in &graph[v] {
                    if !members.contains(w) || came_from.contains_key(w) {
                        continue;
                    }
                    came_from.insert(w, v);
                    if w == start {
                        break 'search;
                    }
                    queue.push_back(w);
                }
            }
            let mut way = vec![start.clone()];
            let mut at = came_from[start];
            while at != start {
                way.push(at.clone());
                at = came_from[at];
            }
            way.push(start.clone());
            way.reverse();
            way
        })
        .collect()
}

/// The `.rs` files under `src` as modules (`mod.rs` and `lib.rs` name their folder).
fn file_modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    for file in crate::scan::sources("src") {
        let relative = file.strip_prefix(src).unwrap();
        if relative == Path::new("main.rs") {
            continue;
        }
        let mut module: Module = relative
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
            module.pop();
        }
        out.insert(module, file);
    }
    out
}

fn inline_modules(
    items: &[syn::Item],
    scope: &Module,
    file: &Module,
    owner: &mut BTreeMap<Module, Module>,
) {
    for item in items {
        if let syn::Item::Mod(m) = item
            && let Some((_, inner)) = &m.content
        {
            let mut path = scope.clone();
            path.push(m.ident.to_string());
            owner.insert(path.clone(), file.clone());
            inline_modules(inner, &path, file, owner);
        }
    }
}

/// The names each scope's `use` items bring in, as written (resolved later, like any path).
#[derive(Default)]
struct Uses {
    /// (scope, name) → the path it stands for, in the scope's terms.
    names: HashMap<(Module, String), (Module, Vec<String>)>,
}

impl Uses {
    fn collect(&mut self, items: &[syn::Item], scope: &Module) {
        for item in items {
            match item {
                syn::Item::Use(u) => self.tree(scope, &mut Vec::new(), &u.tree),
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        let mut path = scope.clone();
                        path.push(m.ident.to_string());
                        self.collect(inner, &path);
                    }
                }
                _ => {}
            }
        }
    }

    fn tree(&mut self, scope: &Module, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.tree(scope, prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let (bound, path) = if name == "self" {
                    (prefix.last().cloned(), prefix.clone())
                } else {
                    let mut path = prefix.clone();
                    path.push(name.clone());
                    (Some(name), path)
                };
                if let Some(bound) = bound {
                    self.names
                        .insert((scope.clone(), bound), (scope.clone(), path));
                }
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                self.names
                    .insert((scope.clone(), r.rename.to_string()), (scope.clone(), path));
            }
            syn::UseTree::Glob(_) => {}
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.tree(scope, prefix, tree);
                }
            }
        }
    }
}

struct Reader<'a> {
    owner: &'a BTreeMap<Module, Module>,
    uses: &'a Uses,
    scope: Module,
    found: BTreeMap<Module, String>,
}

impl Reader<'_> {
    /// The module a path written in `scope` lands in, if it is one of the crate's.
    fn resolve(&self, scope: &Module, path: &[String], depth: usize) -> Option<Module> {
        let first = path.first()?.as_str();
        let absolute: Module = match first {
            "crate" => path[1..].to_vec(),
            "super" => {
                let ups = path.iter().take_while(|s| *s == "super").count();
                let mut base = scope[..scope.len().checked_sub(ups)?].to_vec();
                base.extend_from_slice(&path[ups..]);
                base
            }
            "self" => {
                let mut base = scope.clone();
                base.extend_from_slice(&path[1..]);
                base
            }
            _ => {
                let mut child = scope.clone();
                child.push(first.to_owned());
                if self.owner.contains_key(&child) {
                    let mut base = scope.clone();
                    base.extend_from_slice(path);
                    base
                } else if let Some((at, named)) =
                    self.uses.names.get(&(scope.clone(), first.into()))
                    && depth < 8
                    && named.first().map(String::as_str) != Some(first)
                {
                    let mut whole = named.clone();
                    whole.extend_from_slice(&path[1..]);
                    return self.resolve(at, &whole, depth + 1);
                } else {
                    return None;
                }
            }
        };
        // The longest beginning of the path that is a module, as its file.
        (0..=absolute.len())
            .rev()
            .find_map(|n| self.owner.get(&absolute[..n]))
            .cloned()
    }

    fn note(&mut self, path: &[String]) {
        if let Some(module) = self.resolve(&self.scope.clone(), path, 0) {
            self.found.entry(module).or_insert_with(|| path.join("::"));
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(syn::UseName { ident })
            | syn::UseTree::Rename(syn::UseRename { ident, .. }) => {
                let mut path = prefix.clone();
                if ident != "self" {
                    path.push(ident.to_string());
                }
                self.note(&path);
            }
            syn::UseTree::Glob(_) => self.note(&prefix.clone()),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// Paths inside tokens that syn leaves unparsed (attributes, macro calls): every run of
    /// `name :: name :: …`.
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let is_colon =
            |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ':');
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                TokenTree::Group(g) => {
                    self.tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(first) => {
                    let mut run = vec![first.to_string()];
                    i += 1;
                    while is_colon(tokens.get(i)) && is_colon(tokens.get(i + 1)) {
                        match tokens.get(i + 2) {
                            Some(TokenTree::Ident(next)) => {
                                run.push(next.to_string());
                                i += 3;
                            }
                            _ => break,
                        }
                    }
                    if run.len() > 1 {
                        self.note(&run);
                    }
                }
                _ => i += 1,
            }
        }
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        for attr in &m.attrs {
            self.visit_attribute(attr);
        }
        if let Some((_, items)) = &m.content {
            self.scope.push(m.ident.to_string());
            for item in items {
                self.visit_item(item);
            }
            self.scope.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 || path.leading_colon.is_none() {
            self.note(&segments);
        }
        visit::visit_path(self, path);
    }

    /// `pub(super)` and `pub(in crate::x)` say who may see an item, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        self.tokens(attr.meta.to_token_stream());
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }
}
