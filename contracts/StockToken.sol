// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./ERC20.sol";
import {Owned} from "./Owned.sol";

/// @title StockToken
/// @notice 18-decimal tokenized stock (e.g. TSLAx); the owner mints.
contract StockToken is ERC20, Owned {
    constructor(string memory name_, string memory symbol_) ERC20(name_, symbol_, 18) {}

    /// @notice Mints `amount` (18 decimals) to `to`. Owner only.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
