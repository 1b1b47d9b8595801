// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20, IERC20, TransferHelper} from "./ERC20.sol";

/// @notice Receiver of a pair's extra swap fee (the "fee hook"), e.g. the FeeLocker.
interface IFeeReceiver {
    /// @notice Called by the pair right after it transferred `amount` of `feeToken` to the receiver.
    function onSwapFee(address feeToken, uint256 amount) external;
}

/// @notice Immutable configuration of a pair. All zero for a plain Uniswap-V2-style pair.
/// @param virtualReserve0 Amount of token0 the price math pretends the pool holds on top of its real balance.
/// @param virtualReserve1 Same for token1 (at most one side is non-zero in practice).
/// @param initializer If non-zero, the only address allowed to add liquidity; liquidity can then never be removed.
/// @param feeRecipient If non-zero, receives `feeBps` of every swap input (the fee hook).
/// @param feeBps Extra swap fee in basis points of the input, sent to `feeRecipient`.
struct PairConfig {
    uint256 virtualReserve0;
    uint256 virtualReserve1;
    address initializer;
    address feeRecipient;
    uint256 feeBps;
}

/// @title AmmPair
/// @notice Constant-product pool (x * y = k) with a 0.3% LP fee, Uniswap-V2 style: callers transfer
/// tokens in first, then call `mint` / `swap`; `burn` pays out for LP tokens sent to the pair.
/// The pool's ERC-20 is its LP token. No flash swaps, no TWAP oracle, no protocol fee.
///
/// Virtual reserves: the price math uses `reserve + virtualReserve` on each side, while only the
/// real reserve can be paid out. A pool can therefore be opened single-sided (all tokens, no quote)
/// at a chosen price: with supply S and virtual quote V the opening price is V / S, so the market
/// cap is V. Sellers can never take out more quote than buyers put in.
///
/// Launch pools (`initializer` set): only the initializer (a launch venue) can add liquidity and
/// `burn` always reverts, so their liquidity is locked forever.
contract AmmPair is ERC20 {
    /// @notice LP tokens minted to the dead address on the first deposit (inflation-attack guard).
    uint256 public constant MINIMUM_LIQUIDITY = 1000;
    /// @notice Upper bound for the fee hook, 10%.
    uint256 public constant MAX_FEE_BPS = 1000;
    /// @notice Address with no known key; LP tokens sent here are locked forever.
    address public constant DEAD = 0x000000000000000000000000000000000000dEaD;

    address public immutable factory;
    address public immutable token0;
    address public immutable token1;
    uint256 public immutable virtualReserve0;
    uint256 public immutable virtualReserve1;
    address public immutable initializer;
    address public immutable feeRecipient;
    uint256 public immutable feeBps;

    uint256 private reserve0;
    uint256 private reserve1;
    uint256 private unlocked = 1;

    event Mint(address indexed sender, uint256 amount0, uint256 amount1);
    event Burn(address indexed sender, uint256 amount0, uint256 amount1, address indexed to);
    /// @notice Input amounts include the fee-hook part; see FeeLocker.FeesAccrued for that part.
    event Swap(
        address indexed sender,
        uint256 amount0In,
        uint256 amount1In,
        uint256 amount0Out,
        uint256 amount1Out,
        address indexed to
    );
    /// @notice Real reserves after every change.
    event Sync(uint256 reserve0, uint256 reserve1);

    modifier lock() {
        require(unlocked == 1, "AmmPair: locked");
        unlocked = 0;
        _;
        unlocked = 1;
    }

    constructor(address token0_, address token1_, PairConfig memory config) ERC20("Reference AMM LP", "RAMM-LP", 18) {
        require(config.feeBps <= MAX_FEE_BPS, "AmmPair: fee too high");
        require((config.feeBps == 0) == (config.feeRecipient == address(0)), "AmmPair: fee needs a recipient");
        factory = msg.sender;
        token0 = token0_;
        token1 = token1_;
        virtualReserve0 = config.virtualReserve0;
        virtualReserve1 = config.virtualReserve1;
        initializer = config.initializer;
        feeRecipient = config.feeRecipient;
        feeBps = config.feeBps;
    }

    /// @notice Real token balances the pool accounts for.
    function getReserves() external view returns (uint256 reserve0_, uint256 reserve1_) {
        return (reserve0, reserve1);
    }

    /// @notice Reserves the price math uses: real + virtual.
    function getEffectiveReserves() external view returns (uint256 reserve0_, uint256 reserve1_) {
        return (reserve0 + virtualReserve0, reserve1 + virtualReserve1);
    }

    /// @notice Output for swapping exactly `amountIn` of `tokenIn`, after the fee hook and the 0.3% LP fee.
    /// @dev Reverts when the pool cannot pay it out of its real reserve.
    function getAmountOut(uint256 amountIn, address tokenIn) external view returns (uint256 amountOut) {
        require(amountIn > 0, "AmmPair: zero input amount");
        bool zeroForOne = tokenIn == token0;
        require(zeroForOne || tokenIn == token1, "AmmPair: token not in pair");
        (uint256 reserveIn, uint256 reserveOut) = zeroForOne ? (reserve0, reserve1) : (reserve1, reserve0);
        (uint256 virtualIn, uint256 virtualOut) =
            zeroForOne ? (virtualReserve0, virtualReserve1) : (virtualReserve1, virtualReserve0);
        uint256 inAfterHook = amountIn - (amountIn * feeBps) / 10_000;
        uint256 inWithFee = inAfterHook * 997;
        amountOut = (inWithFee * (reserveOut + virtualOut)) / ((reserveIn + virtualIn) * 1000 + inWithFee);
        require(amountOut > 0, "AmmPair: insufficient output amount");
        require(amountOut < reserveOut, "AmmPair: insufficient liquidity");
    }

    /// @notice Mints LP tokens for the tokens sent to the pair since the last update.
    /// @dev First deposit: sqrt((amount0 + virtual0) * (amount1 + virtual1)) - MINIMUM_LIQUIDITY.
    /// @param to Receiver of the LP tokens.
    /// @return liquidity LP tokens minted to `to`.
    function mint(address to) external lock returns (uint256 liquidity) {
        require(initializer == address(0) || msg.sender == initializer, "AmmPair: only the initializer can add liquidity");
        (uint256 r0, uint256 r1) = (reserve0, reserve1);
        uint256 balance0 = IERC20(token0).balanceOf(address(this));
        uint256 balance1 = IERC20(token1).balanceOf(address(this));
        liquidity = _mintLiquidity(to, balance0 - r0, balance1 - r1, r0, r1);
        _update(balance0, balance1);
        emit Mint(msg.sender, balance0 - r0, balance1 - r1);
    }

    /// @notice First deposit made by one of the pair's tokens from inside its own constructor.
    /// @dev While a contract is being constructed it has no code, so the pair cannot call its
    /// `balanceOf`; the token states how much of itself it credited to the pair instead. A token is
    /// the authority on its own balances anyway, so this trusts nothing a `balanceOf` call would not.
    /// @param selfAmount Amount of the calling token already credited to the pair.
    /// @param to Receiver of the LP tokens.
    function mintFromConstructingToken(uint256 selfAmount, address to) external lock returns (uint256 liquidity) {
        require(msg.sender == token0 || msg.sender == token1, "AmmPair: caller is not a token of this pair");
        require(msg.sender.code.length == 0, "AmmPair: only callable from the token's constructor");
        require(totalSupply == 0, "AmmPair: already initialized");
        require(initializer == address(0) || msg.sender == initializer, "AmmPair: only the initializer can add liquidity");
        uint256 balance0 = msg.sender == token0 ? selfAmount : IERC20(token0).balanceOf(address(this));
        uint256 balance1 = msg.sender == token1 ? selfAmount : IERC20(token1).balanceOf(address(this));
        liquidity = _mintLiquidity(to, balance0, balance1, 0, 0);
        _update(balance0, balance1);
        emit Mint(msg.sender, balance0, balance1);
    }

    /// @notice Burns the LP tokens sent to the pair and pays out the matching share of real reserves.
    /// @dev Always reverts for launch pools: their liquidity is locked forever.
    function burn(address to) external lock returns (uint256 amount0, uint256 amount1) {
        require(initializer == address(0), "AmmPair: liquidity is locked forever");
        uint256 balance0 = IERC20(token0).balanceOf(address(this));
        uint256 balance1 = IERC20(token1).balanceOf(address(this));
        uint256 liquidity = balanceOf[address(this)];
        amount0 = (liquidity * balance0) / totalSupply;
        amount1 = (liquidity * balance1) / totalSupply;
        require(amount0 > 0 && amount1 > 0, "AmmPair: insufficient liquidity burned");
        _burn(address(this), liquidity);
        TransferHelper.safeTransfer(token0, to, amount0);
        TransferHelper.safeTransfer(token1, to, amount1);
        _update(IERC20(token0).balanceOf(address(this)), IERC20(token1).balanceOf(address(this)));
        emit Burn(msg.sender, amount0, amount1, to);
    }

    /// @notice Pays out the requested amounts, then checks that the tokens sent in keep
    /// (x + virtualX) * (y + virtualY) from decreasing after fees.
    /// @dev The fee hook takes `feeBps` of each input first; the 0.3% LP fee applies to the rest.
    function swap(uint256 amount0Out, uint256 amount1Out, address to) external lock {
        require(amount0Out > 0 || amount1Out > 0, "AmmPair: insufficient output amount");
        (uint256 r0, uint256 r1) = (reserve0, reserve1);
        // Never pay out a side's whole real reserve (a single-sided pool has one side at zero).
        require(
            (amount0Out == 0 || amount0Out < r0) && (amount1Out == 0 || amount1Out < r1), "AmmPair: insufficient liquidity"
        );
        require(to != token0 && to != token1, "AmmPair: invalid recipient");
        if (amount0Out > 0) TransferHelper.safeTransfer(token0, to, amount0Out);
        if (amount1Out > 0) TransferHelper.safeTransfer(token1, to, amount1Out);
        uint256 balance0 = IERC20(token0).balanceOf(address(this));
        uint256 balance1 = IERC20(token1).balanceOf(address(this));
        uint256 amount0In = balance0 > r0 - amount0Out ? balance0 - (r0 - amount0Out) : 0;
        uint256 amount1In = balance1 > r1 - amount1Out ? balance1 - (r1 - amount1Out) : 0;
        require(amount0In > 0 || amount1In > 0, "AmmPair: insufficient input amount");
        emit Swap(msg.sender, amount0In, amount1In, amount0Out, amount1Out, to);
        (uint256 net0In, uint256 fee0) = _takeHookFee(token0, amount0In);
        (uint256 net1In, uint256 fee1) = _takeHookFee(token1, amount1In);
        balance0 -= fee0;
        balance1 -= fee1;
        _checkK(balance0, balance1, net0In, net1In, r0, r1);
        _update(balance0, balance1);
    }

    function _takeHookFee(address token, uint256 amountIn) private returns (uint256 netIn, uint256 fee) {
        fee = (amountIn * feeBps) / 10_000;
        if (fee > 0) {
            TransferHelper.safeTransfer(token, feeRecipient, fee);
            IFeeReceiver(feeRecipient).onSwapFee(token, fee);
        }
        netIn = amountIn - fee;
    }

    function _checkK(uint256 balance0, uint256 balance1, uint256 net0In, uint256 net1In, uint256 r0, uint256 r1)
        private
        view
    {
        uint256 adjusted0 = (balance0 + virtualReserve0) * 1000 - net0In * 3;
        uint256 adjusted1 = (balance1 + virtualReserve1) * 1000 - net1In * 3;
        require(
            adjusted0 * adjusted1 >= (r0 + virtualReserve0) * (r1 + virtualReserve1) * 1_000_000,
            "AmmPair: K"
        );
    }

    function _mintLiquidity(address to, uint256 amount0, uint256 amount1, uint256 r0, uint256 r1)
        private
        returns (uint256 liquidity)
    {
        if (totalSupply == 0) {
            uint256 root = _sqrt((amount0 + virtualReserve0) * (amount1 + virtualReserve1));
            require(root > MINIMUM_LIQUIDITY, "AmmPair: insufficient initial liquidity");
            _mint(DEAD, MINIMUM_LIQUIDITY);
            liquidity = root - MINIMUM_LIQUIDITY;
        } else {
            uint256 l0 = (amount0 * totalSupply) / (r0 + virtualReserve0);
            uint256 l1 = (amount1 * totalSupply) / (r1 + virtualReserve1);
            liquidity = l0 < l1 ? l0 : l1;
        }
        require(liquidity > 0, "AmmPair: insufficient liquidity minted");
        _mint(to, liquidity);
    }

    function _update(uint256 balance0, uint256 balance1) private {
        reserve0 = balance0;
        reserve1 = balance1;
        emit Sync(balance0, balance1);
    }

    function _sqrt(uint256 y) private pure returns (uint256 z) {
        if (y > 3) {
            z = y;
            uint256 x = y / 2 + 1;
            while (x < z) {
                z = x;
                x = (y / x + x) / 2;
            }
        } else if (y != 0) {
            z = 1;
        }
    }
}
