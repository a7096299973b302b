import { describe, expect, it } from 'vitest';
import { defineTask } from '../../src/core/define-task.js';
import { chain, chord, compileWorkflow, group, MAX_WORKFLOW_EDGES, MAX_WORKFLOW_NODES, task, workflow, type WorkflowPart } from '../../src/core/workflow.js';

/** Each node's id and parents, in declared order. */
const edges = (root: WorkflowPart) => compileWorkflow(root).nodes.map((n) => [n.id, n.dependsOn]);
const refusal = (root: () => WorkflowPart) => {
  try {
    compileWorkflow(root());
  } catch (error) {
    expect(error).toMatchObject({ code: 'TL_INVALID_WORKFLOW' });
    return (error as Error).message;
  }
  throw new Error('compiled');
};

describe('compiling a workflow', () => {
  it('a chain runs in order; unnamed nodes are numbered depth-first', () => {
    expect(edges(chain(task('a'), task('b'), task('c')))).toEqual([['0', []], ['1', ['0']], ['2', ['1']]]);
  });

  it('takes node, dependsOn and runOnFailure out of a node\'s task options, even when given as undefined', () => {
    for (const key of ['node', 'dependsOn', 'runOnFailure']) {
      const [node] = compileWorkflow(chain(task('t', 1, { queue: 'q', [key]: undefined }), task('u', 2))).nodes;
      expect(node.options).toEqual({ queue: 'q' });
      expect(Object.keys(node.options)).toEqual(['queue']);
    }
  });

  it('a chain through a group: every member waits on the part before, the next part on every member', () => {
    const root = chain(task('fetch', { url: 'u' }, { node: 'fetch' }), group(task('resize', { w: 320 }), task('resize', { w: 640 })), task('publish', undefined, { node: 'publish' }));
    expect(edges(root)).toEqual([['fetch', []], ['0', ['fetch']], ['1', ['fetch']], ['publish', ['0', '1']]]);
    const compiled = compileWorkflow(root);
    expect(compiled.roots).toEqual(['fetch']);
    expect(compiled.nodes[1]).toMatchObject({ type: 'resize', payload: { w: 320 }, runOnFailure: false });
    expect(compiled.nodes[3].payload).toBeNull();
  });

  it('a chord: the callback waits on every member, in declared order', () => {
    expect(edges(chord([task('x', 1), task('x', 2), task('x', 3)], task('sum', undefined, { node: 'sum' })))).toEqual([['0', []], ['1', []], ['2', []], ['sum', ['0', '1', '2']]]);
    expect(edges(chord(group(task('x'), chain(task('y'), task('z'))), task('cb')))).toEqual([['0', []], ['1', []], ['2', ['1']], ['3', ['0', '2']]]);
  });

  it('the general graph: a diamond with a shared parent; nested in a chain its roots wait on what came before', () => {
    const diamond = workflow({ nodes: { a: task('x'), b: task('y', {}, { dependsOn: ['a'] }), c: task('z', {}, { dependsOn: ['a'] }), d: task('w', {}, { dependsOn: ['b', 'c'], runOnFailure: true }) } });
    expect(edges(diamond)).toEqual([['a', []], ['b', ['a']], ['c', ['a']], ['d', ['b', 'c']]]);
    expect(compileWorkflow(diamond).nodes[3].runOnFailure).toBe(true);
    expect(edges(chain(task('start', undefined, { node: 'start' }), diamond, task('end', undefined, { node: 'end' })))).toEqual([
      ['start', []], ['a', ['start']], ['b', ['a']], ['c', ['a']], ['d', ['b', 'c']], ['end', ['d']],
    ]);
  });

  it('takes a defined task for its type, and keeps the enqueue options apart from the graph', () => {
    const resize = defineTask<{ w: number }>('image:resize');
    const [node] = compileWorkflow(task(resize, { w: 1 }, { queue: 'media', maxRetries: 2, node: 'r' })).nodes;
    expect(node).toMatchObject({ id: 'r', type: 'image:resize', options: { queue: 'media', maxRetries: 2 }, dependsOn: [] });
    expect(node.definition).toBe(resize);
    expect(node.options).not.toHaveProperty('node');
  });

  it('refuses, naming the node: unknown dependsOn, itself, twice, a cycle, duplicate ids, bad ids', () => {
    expect(refusal(() => workflow({ nodes: { a: task('x', {}, { dependsOn: ['nope'] }) } }))).toMatch(/^node "a" depends on "nope", which is no node of this workflow \(its nodes: "a"\)$/);
    expect(refusal(() => workflow({ nodes: { a: task('x', {}, { dependsOn: ['a'] }) } }))).toBe('node "a" depends on itself');
    expect(refusal(() => workflow({ nodes: { a: task('x'), b: task('x', {}, { dependsOn: ['a', 'a'] }) } }))).toBe('node "b" names a node twice in dependsOn');
    expect(refusal(() => workflow({ nodes: { a: task('x', {}, { dependsOn: ['c'] }), b: task('x', {}, { dependsOn: ['a'] }), c: task('x', {}, { dependsOn: ['b'] }), d: task('x') } }))).toMatch(/^the nodes "a", "b", "c" wait on each other in a cycle/);
    expect(refusal(() => chain(task('x', 1, { node: 'n' }), task('x', 2, { node: 'n' })))).toBe('node id "n" is used twice; each node needs its own id');
    expect(refusal(() => task('x', 1, { node: '' }))).toMatch(/^node id "" is not accepted/);
    expect(refusal(() => task('x', 1, { node: 'a\nb' }))).toMatch(/no control characters/);
    expect(refusal(() => task('x', 1, { node: 'a\u0085b' }))).toMatch(/no control characters/);
    expect(refusal(() => task('x', 1, { node: 'p\uD800' }))).toMatch(/no lone surrogate/);
    expect(refusal(() => workflow({ nodes: { ['q\uDC00']: task('x') } }))).toMatch(/no lone surrogate/);
    expect(refusal(() => chain(task('x', {}, { dependsOn: ['a'] })))).toMatch(/dependsOn names nodes of workflow\(\{ nodes \}\)/);
  });

  it('refuses empty parts, parts that are not parts, and a type that is not one', () => {
    expect(refusal(() => chain())).toBe('the workflow: chain() needs at least one part');
    expect(refusal(() => chain(task('a'), group()))).toBe('the workflow › chain part 1: group() needs at least one part');
    expect(refusal(() => workflow({ nodes: {} }))).toMatch(/needs at least one node/);
    expect(refusal(() => chain(task('a'), { kind: 'nope' } as unknown as WorkflowPart))).toMatch(/^the workflow › chain part 1 is not a workflow part/);
    expect(refusal(() => task(''))).toMatch(/needs a task type/);
  });

  it(`holds ${MAX_WORKFLOW_NODES.toLocaleString('en')} nodes and refuses one more`, () => {
    const members = (n: number) => Array.from({ length: n }, (_, i) => task('x', { i }));
    const big = compileWorkflow(chord(members(MAX_WORKFLOW_NODES - 1), task('cb', undefined, { node: 'cb' })));
    expect(big.nodes).toHaveLength(MAX_WORKFLOW_NODES);
    expect(big.nodes.at(-1)!.dependsOn).toHaveLength(MAX_WORKFLOW_NODES - 1);
    expect(refusal(() => group(...members(MAX_WORKFLOW_NODES + 1)))).toBe('a workflow has at most 10,000 nodes; this one has more');
  });

  it(`refuses more than ${MAX_WORKFLOW_EDGES.toLocaleString('en')} dependencies: two groups chained make every pair one`, () => {
    const members = (n: number, tag: string) => Array.from({ length: n }, (_, i) => task('x', { i }, { node: `${tag}${i}` }));
    expect(compileWorkflow(chain(group(...members(100, 'a')), group(...members(1000, 'b')))).nodes).toHaveLength(1100);
    expect(refusal(() => chain(group(...members(400, 'a')), group(...members(400, 'b'))))).toMatch(/^this workflow has 160,000 dependencies; the most is 100,000/);
    // A task between them joins the groups with n + m edges.
    expect(compileWorkflow(chain(group(...members(400, 'a')), task('join', null, { node: 'join' }), group(...members(400, 'b')))).nodes).toHaveLength(801);
  });
});
