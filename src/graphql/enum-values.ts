/**
 * An enum's values from the domain's list of them, each with its description: the map forces one
 * description per value, so a value added to the list and not described fails typecheck.
 */
export function describedValues<const V extends string>(
  values: readonly V[],
  descriptions: { [K in V]: string },
): { [K in V]: { value: K; description: string } } {
  return Object.fromEntries(values.map((value) => [value, { value, description: descriptions[value] }])) as {
    [K in V]: { value: K; description: string };
  };
}
