import { pageQuery } from '../domain/inputs.ts';
import { parseInput } from '../domain/validate.ts';
import { fetchPage } from '../repositories/paging.ts';
import type { Deps } from './context.ts';
import { paginated } from './paging.ts';

/** The style (product shots) and caption (video edit) catalogues the spec leaves undescribed. */
export function createTemplateService({ db }: Pick<Deps, 'db'>) {
  return {
    async listStyles(query: unknown) {
      const page = parseInput(pageQuery, query);
      const { rows, total } = await fetchPage(
        db.selectFrom('style_templates'),
        (q) => q.select(['id', 'name', 'description', 'prompt', 'background', 'accent']).orderBy('id'),
        page,
      );
      return paginated(rows, total, page);
    },
    async listCaptionTemplates(query: unknown) {
      const page = parseInput(pageQuery, query);
      const { rows, total } = await fetchPage(
        db.selectFrom('caption_templates'),
        (q) => q.select(['id', 'name', 'description', 'font_size', 'color', 'highlight_color', 'position', 'uppercase']).orderBy('id'),
        page,
      );
      return paginated(rows, total, page);
    },
  };
}
export type TemplateService = ReturnType<typeof createTemplateService>;
