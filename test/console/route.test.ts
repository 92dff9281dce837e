import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { FUZZING } from '../tier.js';
import { consoleModule } from './modules.js';

/** The view in the console's address (console/src/route.ts): read from any fragment, written back the same. */

type Sort = 'id' | '-id' | 'name' | '-name';
interface PlantsView {
  q: string;
  tags: string[];
  sort: Sort;
  sortChosen: boolean;
  limit: number;
}
interface Route {
  section: string;
  plants: PlantsView;
}
interface RouteModule {
  parseRoute(hash: string): Route;
  routeHash(route: Route): string;
  splitTags(text: string): string[];
  tagsText(tags: readonly string[]): string;
  sortState(sort: Sort, column: 'id' | 'name'): string;
  clickedSort(view: { sort: Sort; sortChosen: boolean }, column: 'id' | 'name'): Sort;
  PAGE_SIZES: readonly number[];
  SORTS: ReadonlyArray<readonly [Sort, string]>;
}

const DEFAULT: PlantsView = { q: '', tags: [], sort: 'id', sortChosen: false, limit: 25 };
const plants = (view: Partial<PlantsView>): Route => ({ section: 'plants', plants: { ...DEFAULT, ...view } });

describe('the console: the view in the address', () => {
  let m: RouteModule;
  before(async () => {
    m = await consoleModule<RouteModule>('route.ts');
  });

  it('reads the section, with or without # and /; an unknown one, or none, is the plants', () => {
    for (const hash of ['', '#', '#plants', '#/plants', 'plants', '#nowhere', '#Plants', '#plants/', '#?']) {
      assert.deepEqual(m.parseRoute(hash), plants({}), hash);
    }
    for (const section of ['changes', 'webhooks', 'tokens', 'about']) {
      assert.deepEqual(m.parseRoute(`#${section}`), { section, plants: DEFAULT });
      // Another section's query names no plants view.
      assert.deepEqual(m.parseRoute(`#${section}?q=fern&limit=50`), { section, plants: DEFAULT });
    }
  });

  it('reads search, tags, order and page size', () => {
    assert.deepEqual(
      m.parseRoute('#plants?q=boston+fern&tag=shade&tag=tropical&sort=-name&limit=50'),
      plants({ q: 'boston fern', tags: ['shade', 'tropical'], sort: '-name', sortChosen: true, limit: 50 }),
    );
    for (const [sort] of m.SORTS) assert.deepEqual(m.parseRoute(`#plants?sort=${sort}`).plants, { ...DEFAULT, sort, sortChosen: true });
    assert.deepEqual(m.PAGE_SIZES, [10, 25, 50, 100]);
    for (const size of m.PAGE_SIZES) assert.equal(m.parseRoute(`#plants?limit=${size}`).plants.limit, size);
    // Percent-escapes, + as a space, %2B as a plus, any script.
    assert.deepEqual(m.parseRoute('#plants?q=%C3%A9t%C3%A9%2B1&tag=%E6%A4%8D%E7%89%A9').plants, { ...DEFAULT, q: 'été+1', tags: ['植物'] });
  });

  it('ignores what it cannot read, for the defaults: never a crash', () => {
    for (const sort of ['', 'up', 'ID', 'tag', '-', '--name', 'name ', '%00']) {
      assert.deepEqual(m.parseRoute(`#plants?sort=${sort}`).plants, DEFAULT, sort);
    }
    for (const limit of ['', '7', '250', '1000', '0', '-10', '25.0', '1e2', 'abc', '+50', ' 50', '0x32', '050']) {
      assert.equal(m.parseRoute(`#plants?limit=${encodeURIComponent(limit)}`).plants.limit, 25, limit);
    }
    // Bad escapes are read as written; unknown parameters and a second q are ignored.
    assert.deepEqual(m.parseRoute('#plants?q=%zz%&cursor=abc&token=x&q=second').plants, { ...DEFAULT, q: '%zz%' });
    assert.deepEqual(m.parseRoute('#plants?q=%E0%A4%A').plants.q, '\uFFFD%A');
    assert.deepEqual(m.parseRoute('#plants?&&=&q&tag&tag=+&limit').plants, DEFAULT);
  });

  it('reads each tag of the address whole, commas included (a tag may hold one): trimmed, no empty ones, no repeats', () => {
    assert.deepEqual(m.parseRoute('#plants?tag=a,+b&tag=&tag=+c+&tag=c').plants.tags, ['a, b', 'c']);
    assert.deepEqual(m.parseRoute('#plants?tag=red%2C%20white').plants.tags, ['red, white']);
    assert.deepEqual(m.parseRoute('#plants?q=++fern++').plants.q, 'fern');
  });

  it('reads tags as typed in the field: separated by commas, trimmed, a tag in double quotes whole', () => {
    assert.deepEqual(m.splitTags(' succulent, tropical ,, fern,tropical'), ['succulent', 'tropical', 'fern']);
    assert.deepEqual(m.splitTags('"red, white", shade'), ['red, white', 'shade']);
    assert.deepEqual(m.splitTags(' "a ""quoted"" tag" , "  " ,"x" y'), ['a "quoted" tag', '  ', 'x y']);
    assert.equal(m.tagsText(['red, white', 'shade', 'say "hi"', ' spaced ']), '"red, white", shade, "say ""hi""", " spaced "');
  });

  it('writes any tags in the field as it reads them back', FUZZING, () => {
    const tags = fc.uniqueArray(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), { maxLength: 4 });
    fc.assert(
      fc.property(tags, (list) => assert.deepEqual(m.splitTags(m.tagsText(list)), list)),
      { numRuns: 500 },
    );
  });

  it('writes a view in one way: parameters in a fixed order, the defaults left out', () => {
    assert.equal(m.routeHash(plants({})), '#plants');
    assert.equal(m.routeHash({ section: 'about', plants: { ...DEFAULT, q: 'x' } }), '#about');
    assert.equal(
      m.routeHash(plants({ limit: 100, sort: 'name', sortChosen: true, tags: ['a b', 'c&d'], q: 'fern & ivy' })),
      '#plants?q=fern+%26+ivy&tag=a+b&tag=c%26d&sort=name&limit=100',
    );
    assert.equal(m.routeHash(plants({ sort: '-id', sortChosen: true })), '#plants?sort=-id');
    // The default order once chosen stays in the address, so that the next click on Id knows it was.
    assert.equal(m.routeHash(plants({ sort: 'id', sortChosen: true })), '#plants?sort=id');
    assert.equal(m.routeHash(plants({ limit: 10 })), '#plants?limit=10');
  });

  it('sorts by a clicked column ascending, then descending, then ascending again; aria-sort says which', () => {
    const chosen = (sort: Sort) => ({ sort, sortChosen: true });
    assert.equal(m.clickedSort(chosen('id'), 'name'), 'name');
    assert.equal(m.clickedSort(chosen('name'), 'name'), '-name');
    assert.equal(m.clickedSort(chosen('-name'), 'name'), 'name');
    assert.equal(m.clickedSort(chosen('-name'), 'id'), 'id');
    assert.equal(m.clickedSort(chosen('id'), 'id'), '-id');
    assert.equal(m.clickedSort(chosen('-id'), 'id'), 'id');
    // The default order (by id, ascending, not chosen): a first click on either header sorts ascending by it.
    assert.equal(m.clickedSort(DEFAULT, 'id'), 'id');
    assert.equal(m.clickedSort(DEFAULT, 'name'), 'name');
    assert.deepEqual(
      (['id', '-id', 'name', '-name'] as const).map((sort) => [m.sortState(sort, 'id'), m.sortState(sort, 'name')]),
      [
        ['ascending', 'none'],
        ['descending', 'none'],
        ['none', 'ascending'],
        ['none', 'descending'],
      ],
    );
  });

  it('reads back every view it writes', FUZZING, () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    const view = fc.record({
      q: text.map((q) => q.trim()),
      tags: fc.array(text, { maxLength: 4 }).map((tags) => [...new Set(tags.map((tag) => tag.trim()).filter((tag) => tag !== ''))]),
      // An order other than the default one is chosen; the default one may be chosen or not.
      sort: fc.constantFrom<[Sort, boolean]>(['id', false], ['id', true], ['-id', true], ['name', true], ['-name', true]),
      limit: fc.constantFrom(...m.PAGE_SIZES),
    });
    fc.assert(
      fc.property(view, (plantsView) => {
        const [sort, sortChosen] = plantsView.sort;
        const route = { section: 'plants', plants: { ...plantsView, sort, sortChosen } };
        assert.deepEqual(m.parseRoute(m.routeHash(route)), route);
      }),
      { numRuns: 500 },
    );
  });

  it('reads any fragment at all as a valid view, which it writes in its own words once and for all', FUZZING, () => {
    const piece = fc.oneof(
      fc.constantFrom('#', 'plants', '?', '&', '=', 'q', 'tag', 'sort', 'limit', '%', ',', '+', ' ', '-name', '50'),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), (pieces) => {
        const route = m.parseRoute(pieces.join(''));
        assert.ok(['plants', 'changes', 'webhooks', 'tokens', 'about'].includes(route.section));
        assert.ok(m.SORTS.some(([sort]) => sort === route.plants.sort));
        assert.ok(m.PAGE_SIZES.includes(route.plants.limit));
        assert.equal(route.plants.q, route.plants.q.trim());
        for (const tag of route.plants.tags) assert.ok(tag !== '' && tag === tag.trim(), tag);
        const written = m.routeHash(route);
        assert.deepEqual(m.parseRoute(written), route);
        assert.equal(m.routeHash(m.parseRoute(written)), written);
      }),
      { numRuns: 1000 },
    );
  });
});
