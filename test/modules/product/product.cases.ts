import { byId, type ModuleCases, page } from '../../support/cases.ts';

/** The product module's operations in the isolation matrix and the REST fuzzer. */
export const cases: ModuleCases = {
  isolation: {
    rest: {
      'GET /products': [{ request: () => ({ path: '/products?limit=100' }) }],
      'PATCH /products/{productId}': [
        { target: 'product', request: (id) => ({ path: `/products/${id}`, body: { name: 'Renamed' } }) },
        {
          target: 'taxCode',
          request: (code, own) => ({ path: `/products/${own.product}`, body: { taxCode: code } }),
        },
      ],
    },
    graphql: {
      'Query.product': [byId('product')],
      'Query.productByHandle': [{ target: 'productHandle', args: (handle) => ({ handle }) }],
      'Query.products': [{ args: page }],
      'Mutation.productCreate': [
        { target: 'taxCode', args: (code) => ({ input: { name: 'Matrix', taxCode: code } }) },
      ],
      'Mutation.productUpdate': [
        { target: 'product', args: (id) => ({ id, input: { name: 'Renamed' } }) },
        { target: 'taxCode', args: (code, own) => ({ id: own.product, input: { taxCode: code } }) },
      ],
    },
  },
  fuzz: {
    bodies: {
      'PATCH /products/{productId}': () => ({
        name: 'Fuzz product',
        handle: 'fuzz-product',
        description: 'Measured in requests',
        taxCode: 'VAT25',
      }),
    },
    existingIds: { productId: (fixtures) => fixtures.productId },
  },
};
