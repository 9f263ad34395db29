import { pageQuery } from '../domain/inputs.ts';
import { parseInput } from '../domain/validate.ts';
import { listCaptionTemplates, listStyleTemplates } from '../repositories/templates.ts';
import type { Deps } from './deps.ts';
import { paginated } from './paginated.ts';

/** The style (product shots) and caption (video edit) catalogues the spec leaves undescribed. */
export function createTemplateService({ db }: Pick<Deps, 'db'>) {
  return {
    async listStyles(query: unknown) {
      const page = parseInput(pageQuery, query);
      const { rows, total } = await listStyleTemplates(db, page);
      return paginated(rows, total, page);
    },
    async listCaptionTemplates(query: unknown) {
      const page = parseInput(pageQuery, query);
      const { rows, total } = await listCaptionTemplates(db, page);
      return paginated(rows, total, page);
    },
  };
}
