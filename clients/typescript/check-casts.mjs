// Fails when the client code (the example and the generated types) holds a cast, an `any` or a
// non-null assertion: with a description that generates well, the types alone must do.
//
//     node check-casts.mjs src/play.ts src/generated/kuryr.ts

import { readFileSync } from "node:fs";
import ts from "typescript";

const found = [];
for (const file of process.argv.slice(2)) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    const what = ts.isAsExpression(node)
      ? "`as` cast"
      : ts.isTypeAssertionExpression(node)
        ? "`<T>` cast"
        : ts.isNonNullExpression(node)
          ? "`!` non-null assertion"
          : node.kind === ts.SyntaxKind.AnyKeyword
            ? "`any`"
            : undefined;
    if (what !== undefined) {
      const { line, character } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${file}:${line + 1}:${character + 1}: ${what}: ${node.getText()}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
if (found.length > 0) {
  console.error(found.join("\n"));
  process.exit(1);
}
console.log(`no cast, any or non-null assertion in ${process.argv.length - 2} files`);
