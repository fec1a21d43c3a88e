import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { EnvironmentSchema } from '../../auth/environment.entity.ts';
import type { ServiceContext } from '../../context.ts';
import { newId } from '../../db/ids.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { DomainError } from '../../errors.ts';
import { parseInput } from '../../validation.ts';
import { BILLING_ADDRESS_FIELDS, type BillingAddress } from '../customer/customer.entity.ts';
import { decodeLogo } from './seller.checks.ts';
import {
  type InvoiceSeller,
  type SellerLogo,
  SellerLogoSchema,
  type SellerProfile,
  SellerProfileSchema,
} from './seller.entity.ts';
import { SellerProfileUpdateInput } from './seller.input.ts';

/** An environment's profile as it applies: its own row, or an empty one until it has one. */
export async function effectiveSellerProfile(
  em: EntityManager,
  environmentId: string,
): Promise<SellerProfile> {
  const stored = await cachedRead(`seller-profile:${environmentId}`, () =>
    em.findOne(SellerProfileSchema, { environmentId }),
  );
  return stored ?? emptyProfile(environmentId);
}

function emptyProfile(environmentId: string): SellerProfile {
  return {
    id: '',
    environmentId,
    legalName: null,
    address: null,
    vatId: null,
    taxNumber: null,
    companyId: null,
    email: null,
    phone: null,
    iban: null,
    bic: null,
    paymentInstructions: null,
    footer: null,
    language: 'en',
    logoId: null,
    updatedAt: null,
  } as SellerProfile;
}

/**
 * The seller as an invoice names it now: what a draft prints, and what booking freezes onto the
 * invoice. A profile without a legal name names the seller by the environment's name.
 */
export async function currentSeller(em: EntityManager, environmentId: string): Promise<InvoiceSeller> {
  const profile = await effectiveSellerProfile(em, environmentId);
  const legalName =
    profile.legalName ??
    (
      await cachedRead(`environment:${environmentId}`, () =>
        em.findOneOrFail(EnvironmentSchema, { id: environmentId }),
      )
    ).name;
  return {
    legalName,
    address: profile.address ?? null,
    vatId: profile.vatId ?? null,
    taxNumber: profile.taxNumber ?? null,
    companyId: profile.companyId ?? null,
    email: profile.email ?? null,
    phone: profile.phone ?? null,
    iban: profile.iban ?? null,
    bic: profile.bic ?? null,
    paymentInstructions: profile.paymentInstructions ?? null,
    footer: profile.footer ?? null,
    language: profile.language,
    logoId: profile.logoId ?? null,
  };
}

/** A logo of the environment, by id; null when there is none. */
export function sellerLogo(em: EntityManager, environmentId: string, id: string): Promise<SellerLogo | null> {
  return em.findOne(SellerLogoSchema, { id, environmentId });
}

/** The environment's seller profile: read, and changed with every field checked. */
export class SellerProfileService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  get(): Promise<SellerProfile> {
    return effectiveSellerProfile(this.ctx.em, this.ctx.environmentId);
  }

  logo(id: string): Promise<SellerLogo | null> {
    return sellerLogo(this.ctx.em, this.ctx.environmentId, id);
  }

  /** Checks `raw` here rather than in the schema, so that every refusal is a coded user error. */
  async update(raw: unknown): Promise<SellerProfile> {
    const input = parseInput(SellerProfileUpdateInput, raw);
    const image = input.logo == null ? input.logo : decodeLogo(input.logo);
    if (typeof image === 'string') throw DomainError.onField('INVALID_INPUT', ['logo'], image);
    const { environmentId } = this.ctx;
    return this.ctx.em.transactional(async (tx) => {
      // One row per environment: two first updates at once must not both insert it.
      await tx.execute(
        `insert into seller_profile (id, environment_id, language) values (?, ?, 'en')
         on conflict (environment_id) do nothing`,
        [newId(), environmentId],
        'run',
      );
      const profile = await tx.findOneOrFail(
        SellerProfileSchema,
        { environmentId },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      const { logo: _logo, ...fields } = input;
      if (fields.address) {
        const address = fields.address;
        profile.address = Object.fromEntries(
          BILLING_ADDRESS_FIELDS.map((field) => [field, address[field] ?? null]),
        ) as BillingAddress;
        delete fields.address;
      }
      for (const [key, value] of Object.entries(fields)) {
        if (value !== undefined) (profile as Record<string, unknown>)[key] = value;
      }
      if (image === null) profile.logoId = null;
      if (image) {
        const logo = tx.create(SellerLogoSchema, {
          environmentId,
          mediaType: image.mediaType,
          data: image.bytes.toString('base64'),
          byteSize: image.bytes.length,
        });
        profile.logoId = logo.id;
      }
      profile.updatedAt = new Date();
      await tx.flush();
      return profile;
    });
  }
}
