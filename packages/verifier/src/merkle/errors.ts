/** Why a proof cannot be produced: the caller passed arguments outside the tree. */
export type MerkleErrorCode = 'bad_hash_length' | 'index_out_of_range' | 'size_out_of_range';

export class MerkleError extends RangeError {
  override readonly name = 'MerkleError';
  constructor(
    readonly code: MerkleErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Why a proof does not verify. */
export type MerkleProofReason =
  | 'bad_hash_length' //  a root, leaf hash or proof node is not 32 bytes
  | 'index_out_of_range' //leaf_index >= tree_size, or a size is not a safe integer
  | 'size_out_of_range' // consistency: size1 == 0 or size1 > size2
  | 'wrong_proof_length' // the proof has more or fewer nodes than the tree shape needs
  | 'root_mismatch'; //    the recomputed root differs

export type MerkleVerification = { valid: true; reason: null } | { valid: false; reason: MerkleProofReason };
