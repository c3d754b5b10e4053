import z from "zod"

/**
 * Errors with a stable name and a typed payload, so hosts can tell them apart without parsing messages and tools can
 * return them as JSON.
 *
 * @example
 * const NotFound = NamedError.create("ResourceNotFound", z.object({ id: z.string() }), (d) => `no resource '${d.id}'`)
 * const err = new NotFound({ id: "git" })
 * err.message // "no resource 'git'"
 * NotFound.is(err) // true
 */
export abstract class NamedError<Data = unknown> extends Error {
  abstract readonly data: Data

  /** `{ name, message, ...data }`, the shape tools print. */
  toJSON(): Record<string, unknown> {
    return { error: this.name, message: this.message, ...(this.data as object) }
  }

  static create<Name extends string, Schema extends z.ZodType<Record<string, unknown>>>(
    name: Name,
    schema: Schema,
    message: (data: z.infer<Schema>) => string,
  ) {
    class Named extends NamedError<z.infer<Schema>> {
      static readonly Schema = schema
      override readonly name: Name = name
      constructor(
        readonly data: z.infer<Schema>,
        options?: ErrorOptions,
      ) {
        super(message(data), options)
      }
      static is(input: unknown): input is Named {
        return input instanceof Error && input.name === name
      }
    }
    Object.defineProperty(Named, "name", { value: name })
    return Named
  }
}

/** A readable message for anything thrown. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}
